// The dev split: items of the train split for every choice made before a run (learning rate, max_tokens, base
// checkpoint, the report's dev accuracy), never the RL prompts and never a test item. It is the tail of the same
// seed-shuffled order whose head the spec's RL prompts are, so growing dataset.n_examples cannot reach it
// unnoticed: devSplit refuses when the two would meet.
import { seededShuffle } from './seeded-shuffle';

/** items of a dev split (arith: the tail of the seed-0 order of its 20,000 train problems) */
export const DEV_SPLIT_SIZE = 512;

// dev = order[n - size, n), order = seededShuffle(train, seed); the RL prompts are order[0, nTrainPrompts)
export function devSplit<T>(train: readonly T[], nTrainPrompts: number, size: number, seed: number | bigint = 0): T[] {
  if (!Number.isInteger(size) || size <= 0) throw new RangeError(`dev size must be a positive integer, got ${size}`);
  if (nTrainPrompts + size > train.length) {
    throw new RangeError(`a dev split of ${size} after ${nTrainPrompts} RL prompts needs ${nTrainPrompts + size} train items, the split has ${train.length}`);
  }
  return seededShuffle(train, seed).slice(train.length - size);
}

export interface SplitOverlap {
  /** dev questions that are also RL prompts */
  withTrainPrompts: string[];
  /** dev questions that are also test items */
  withTest: string[];
}

/** questions of `dev` found among the RL prompts or the test items (compared by question text, as the grader sees them) */
export function devOverlap(dev: ReadonlyArray<{ question: string }>, trainPrompts: ReadonlyArray<{ question: string }>, test: ReadonlyArray<{ question: string }>): SplitOverlap {
  const rl = new Set(trainPrompts.map((p) => p.question));
  const ts = new Set(test.map((p) => p.question));
  return { withTrainPrompts: dev.filter((p) => rl.has(p.question)).map((p) => p.question), withTest: dev.filter((p) => ts.has(p.question)).map((p) => p.question) };
}

/** throws when the dev split shares a question with the RL prompts or the test split */
export function assertDevDisjoint(dev: ReadonlyArray<{ question: string }>, trainPrompts: ReadonlyArray<{ question: string }>, test: ReadonlyArray<{ question: string }>): void {
  const o = devOverlap(dev, trainPrompts, test);
  if (o.withTrainPrompts.length > 0 || o.withTest.length > 0) {
    throw new Error(`the dev split overlaps: ${o.withTrainPrompts.length} question(s) are RL prompts, ${o.withTest.length} are test items (first: ${JSON.stringify([...o.withTrainPrompts, ...o.withTest][0])})`);
  }
}
