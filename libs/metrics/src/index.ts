export * from './metric-labels';
export * from './metric-names';
export * from './rx-metrics';
