export * from './metric-labels';
export * from './metric-names';
export * from './rx-metrics';
export * from './testing/parse-exposition';
