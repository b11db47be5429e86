// @rx/controller: the controller's deliberate public entry, for tools/ only (the chaos controller and the embedded
// sweep evaluate the way rx run does; they drive steps with @rx/step-schedule). Apps and libs cannot import an app
// (@nx/enforce-module-boundaries); eslint.config.js allows this entry in tools/ and nowhere else.
export { ARITH_DATASET_SEED, TRAIN_SHUFFLE_SEED } from './experiment/experiment-data';
export { evaluateItems, type EvalLine } from './phases/evaluation/evaluator';
