export * from './signal-rollout';
export * from './reward-groups';
export * from './completion-lengths';
export * from './batch-signals';
