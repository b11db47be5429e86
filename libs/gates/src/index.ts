export * from './gate-metric-name';
export * from './logged-batch';
export * from './gate-metrics';
export * from './evaluate-gates';
