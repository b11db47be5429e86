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

/** every queue, in pipeline order (the order of QUEUE_NAMES) */
export const QUEUE_NAME_LIST = Object.freeze(Object.values(QUEUE_NAMES)) as readonly [QueueName, ...QueueName[]];
