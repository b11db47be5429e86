export * from './exchange-record.schema';
export * from './record-evidence';
export * from './expected-run';
export * from './check-record';
export { evaluatorIdentity, evaluatorValidation } from './validators/evaluator-validation';
export { decisionValidation, OBSERVATIONS_NOT_RETAINED } from './validators/decision-validation';
export { restorationValidation, SHARED_INIT_ARM } from './validators/restoration-validation';
export { feasibilityValidation, MEASURED_PHASES, projectedWallSeconds } from './validators/feasibility-validation';
export { correctnessValidation, filePins, isUnresolved } from './validators/correctness-validation';
