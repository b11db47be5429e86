export * from './rollout';
export * from './group-mean';
export * from './kernel-baseline';
export * from './rollout-window';
export { referenceKernelBaseline, type ReferencePoint, type ReferenceResult } from './kernel-baseline.reference';
