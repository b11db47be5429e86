// The frozen queue names (kebab-case plurals). Never rename one in place: add a new queue and drain the old.
export const QUEUE_NAMES = Object.freeze({
  stepRequests: 'step-requests',
  sampleRequests: 'sample-requests',
  rollouts: 'rollouts',
  gradedRollouts: 'graded-rollouts',
  trainSteps: 'train-steps',
  stepEvents: 'step-events',
  deadLetters: 'dead-letters',
} as const);

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

export const QUEUE_NAME_LIST = [
  QUEUE_NAMES.stepRequests,
  QUEUE_NAMES.sampleRequests,
  QUEUE_NAMES.rollouts,
  QUEUE_NAMES.gradedRollouts,
  QUEUE_NAMES.trainSteps,
  QUEUE_NAMES.stepEvents,
  QUEUE_NAMES.deadLetters,
] as const satisfies readonly QueueName[];
