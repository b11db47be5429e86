// The problems of a run: the training prompts in the spec's fixed seed-0 shuffled order (the first
// dataset.n_examples of HF Dataset.shuffle(seed=0) over the train split), the first eval.n_examples test items, and
// a fixed dev sample (train items at the tail of the same order: never an RL prompt, never a test item) that the
// training phase scores every 10 steps.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { arithDataset, assertDevDisjoint, DEV_SPLIT_SIZE, devSplit, loadGsm8k, takeTrainPrompts, type Problem } from '@rx/datasets';
import { DEV_EVAL_ITEMS, type ExperimentSpec } from '@rx/spec';
import { sha256Json } from '@rx/run-dir';

/** the seed of the arith generator (its train/test split); the pretraining script uses the same */
export const ARITH_DATASET_SEED = 0;
/** the spec's shuffle of the train split ("a fixed seed-0 shuffled order") */
export const TRAIN_SHUFFLE_SEED = 0;
/** the fixed dev sample the training phase scores: the first items of the dev split (the tail of the train order) */
export const DEV_SAMPLE_SIZE = DEV_EVAL_ITEMS;

export interface ExperimentData {
  /** training prompts in draw order */
  train: Problem[];
  /** evaluation items in file order */
  test: Problem[];
  /** the fixed dev sample: train items that are neither RL prompts nor test items */
  dev: Problem[];
  source: string;
  /** sha256 of the canonical JSON of [{id, question, answer}] of the evaluation items */
  testManifestSha256: string;
  trainManifestSha256: string;
}

export class DatasetNotFoundError extends Error {
  override readonly name = 'DatasetNotFoundError';
}

export interface DataOptions {
  /** a folder with GSM8K train.jsonl/test.jsonl; default RX_GSM8K_DIR, data/gsm8k, then ../shared/data/gsm8k */
  gsm8kDir?: string;
  repoRoot: string;
}

export async function loadExperimentData(spec: ExperimentSpec, opts: DataOptions): Promise<ExperimentData> {
  const name = spec.dataset.name;
  let trainAll: Problem[];
  let testAll: Problem[];
  let source: string;
  if (name === 'arith') {
    trainAll = arithDataset({ split: 'train', seed: ARITH_DATASET_SEED });
    testAll = arithDataset({ split: 'test', seed: ARITH_DATASET_SEED });
    source = `arith (seed ${ARITH_DATASET_SEED})`;
  } else if (name === 'gsm8k') {
    const dir = findGsm8k(opts);
    const data = await loadGsm8k(dir);
    trainAll = data.train;
    testAll = data.test;
    source = `gsm8k from ${dir}`;
  } else {
    throw new DatasetNotFoundError(`dataset '${name}' is not known (known: arith, gsm8k)`);
  }
  const nTrain = spec.dataset.n_examples;
  const nTest = spec.eval.n_examples;
  if (trainAll.length < nTrain) throw new DatasetNotFoundError(`dataset.n_examples is ${nTrain} but the ${name} train split has ${trainAll.length} items`);
  if (testAll.length < nTest) throw new DatasetNotFoundError(`eval.n_examples is ${nTest} but the ${name} test split has ${testAll.length} items`);
  const train = takeTrainPrompts(trainAll, nTrain, TRAIN_SHUFFLE_SEED);
  const test = testAll.slice(0, nTest);
  const devSize = Math.min(DEV_SPLIT_SIZE, trainAll.length - nTrain);
  const dev = devSize > 0 ? devSplit(trainAll, nTrain, devSize, TRAIN_SHUFFLE_SEED).slice(0, DEV_SAMPLE_SIZE) : [];
  assertDevDisjoint(dev, train, testAll);
  const manifest = (ps: Problem[]) => sha256Json(ps.map((p) => ({ id: p.id, question: p.question, answer: p.answer })));
  return { train, test, dev, source, testManifestSha256: manifest(test), trainManifestSha256: manifest(train) };
}

function findGsm8k(opts: DataOptions): string {
  const candidates = [opts.gsm8kDir, process.env.RX_GSM8K_DIR, path.join(opts.repoRoot, 'data', 'gsm8k'), path.join(opts.repoRoot, '..', 'shared', 'data', 'gsm8k')].filter(
    (d): d is string => typeof d === 'string' && d !== '',
  );
  const found = candidates.find((d) => existsSync(path.join(d, 'train.jsonl')) && existsSync(path.join(d, 'test.jsonl')));
  if (!found) throw new DatasetNotFoundError(`GSM8K not found (looked in ${candidates.join(', ')}): run 'rx data fetch gsm8k' or set RX_GSM8K_DIR`);
  return found;
}
