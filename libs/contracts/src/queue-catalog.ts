// The queue catalog: each queue once, with its payload schema and its job options. Producers parse with `schema`
// before adding; consumers safeParse with it before any work. Who consumes a queue and what it feeds is the
// pipeline graph's to say (libs/pipeline/src/pipeline-graph.ts), nowhere else.
import type { z } from 'zod';
import { deadLetterSchema } from './dead-letter.schema';
import { gradedBatchSchema } from './graded-batch.schema';
import { BATCH_JOB_DEFAULTS, DEAD_LETTER_JOB_DEFAULTS, LIGHT_JOB_DEFAULTS, type JobDefaults } from './job-defaults';
import { QUEUE_NAMES, type QueueName } from './queue-names';
import { sampleRequestSchema } from './sample-request.schema';
import { sampledBatchSchema } from './sampled-batch.schema';
import { stepEventSchema } from './step-event.schema';
import { stepRequestSchema } from './step-request.schema';
import { trainStepSchema } from './train-step.schema';

export interface QueueSpec<S extends z.ZodTypeAny = z.ZodTypeAny> {
  readonly name: QueueName;
  readonly schema: S;
  readonly jobOptions: JobDefaults;
  readonly description: string;
}

export const QUEUE_CATALOG = Object.freeze({
  [QUEUE_NAMES.stepRequests]: {
    name: QUEUE_NAMES.stepRequests,
    schema: stepRequestSchema,
    jobOptions: LIGHT_JOB_DEFAULTS,
    description: 'controller -> trainer: start step N of an arm with these prompts',
  },
  [QUEUE_NAMES.sampleRequests]: {
    name: QUEUE_NAMES.sampleRequests,
    schema: sampleRequestSchema,
    jobOptions: LIGHT_JOB_DEFAULTS,
    description: 'trainer -> sampler: sample the step from the saved weights',
  },
  [QUEUE_NAMES.rollouts]: {
    name: QUEUE_NAMES.rollouts,
    schema: sampledBatchSchema,
    jobOptions: BATCH_JOB_DEFAULTS,
    description: 'sampler -> grader: sampled completions with phi and logprobs',
  },
  [QUEUE_NAMES.gradedRollouts]: {
    name: QUEUE_NAMES.gradedRollouts,
    schema: gradedBatchSchema,
    jobOptions: BATCH_JOB_DEFAULTS,
    description: 'grader -> advantage: rollouts with their rewards',
  },
  [QUEUE_NAMES.trainSteps]: {
    name: QUEUE_NAMES.trainSteps,
    schema: trainStepSchema,
    jobOptions: BATCH_JOB_DEFAULTS,
    description: 'advantage -> trainer: rollouts with advantages and the step gate metrics',
  },
  [QUEUE_NAMES.stepEvents]: {
    name: QUEUE_NAMES.stepEvents,
    schema: stepEventSchema,
    jobOptions: LIGHT_JOB_DEFAULTS,
    description: 'trainer -> controller: step N committed; any service -> controller: step N failed for good',
  },
  [QUEUE_NAMES.deadLetters]: {
    name: QUEUE_NAMES.deadLetters,
    schema: deadLetterSchema,
    jobOptions: DEAD_LETTER_JOB_DEFAULTS,
    description: 'any consumer -> humans: jobs that failed their schema or must not be retried',
  },
} as const satisfies { readonly [Q in QueueName]: QueueSpec & { readonly name: Q } });

export type QueueCatalog = typeof QUEUE_CATALOG;

/** The payload type of each queue, from its schema. */
export type PayloadOf<Q extends QueueName> = z.infer<QueueCatalog[Q]['schema']>;

/** queue name -> payload type, for every queue of the catalog */
export type QueuePayloads = { [Q in QueueName]: PayloadOf<Q> };

