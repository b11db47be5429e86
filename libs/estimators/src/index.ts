export * from './rollout';
export * from './group-mean';
export * from './kernel-baseline';
export * from './rollout-window';
