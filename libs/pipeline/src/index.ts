// The pipeline: its graph (each edge with its stage function), the edge runner, the stage functions and the
// interfaces their effects go through (rollout windows, the step ledger, training clients), and the in-process
// pipeline. No BullMQ, Redis or Nest here: libs/queue and libs/service-host run the graph as services.
export * from './checkpoint-ttl';
export * from './datum-builder';
export * from './edge-runner';
export * from './in-memory-transport';
export * from './in-process-pipeline';
export * from './logprob-stats';
export * from './map-concurrent';
export * from './pipeline-graph';
export * from './queue-producer';
export * from './redis-outage';
export * from './renderer-resolver';
export * from './rollout-window.store';
export * from './stage-errors';
export * from './stage-timeout';
export * from './step-gate-metrics';
export * from './trainer-step.ledger';
export * from './training-client.pool';
export * from './stages/advantage.stage';
export * from './stages/grade.stage';
export * from './stages/prepare-step.stage';
export * from './stages/sample.stage';
export * from './stages/train.stage';
