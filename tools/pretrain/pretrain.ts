// Supervised pretraining of the embedded base model (all weights, no LoRA) on the arith train split:
// next-token cross-entropy on `<prompt><completion><eos>`, completion tokens weighted 1 and prompt tokens
// PROMPT_WEIGHT, AdamW with warm-up and cosine decay, global-norm clipping; seeded init and batch order.
// The corpus mixes two answer formats, as written data does, and how often it follows the prompt's request
// depends on the question's phrasing: solutions end on the requested `\boxed{14}` with probability `boxed`
// (seeded, fixed per problem), or `boxedTerse` for terse questions (ending `how many now?`), and on a plain
// `so 14.` otherwise. The cookbook reward credits only boxed answers, so greedy decoding of the base model
// misses the format on terse questions while sampling still boxes some of them: RL has a behaviour to learn
// (as early RL on GSM8K largely teaches the answer format), and the reward level depends on the prompt.
// Writes models/char-lm (float32 weights + config + this run's record) and reports greedy test accuracy, and greedy
// accuracy on the dev split (the last DEV_SPLIT_SIZE items of the controller's seed-0 train order, where settings are
// chosen). `--withoutDev 1` leaves the dev items out of the corpus: a base checkpoint scored on items it never saw.
//
//   node -r ./tools/register.js tools/pretrain/pretrain.ts [--steps 2000] [--batch 16] [--lr 3e-3] [--seed 0] [--boxed 0.9] [--boxedTerse 0.3] [--out models/char-lm] [--eval 1319] [--withoutDev 0]
import { CHAR_EOS, charCompletionText, charPrompt, encodeChars, type Datum } from '@rx/backend';
import { arithDataset, type Problem } from '@rx/datasets';
import {
  CHAR_LM_CONFIG,
  adamwStep,
  disposeTensors,
  ensureTfWasm,
  initAdamW,
  initBaseParams,
  lossAndGrads,
  padDatums,
  paramCount,
  Prng,
  toTensors,
  writeBaseCheckpoint,
  zerosLike,
  type ModelWeights,
  type ParamSet,
} from '@rx/embedded-model';
import * as path from 'node:path';
import { arithDevProblems, scoreBaseParams } from './arith-eval';

const PROMPT_WEIGHT = 0.1;
const DATASET_SEED = 0;

interface Options {
  steps: number;
  batch: number;
  lr: number;
  seed: number;
  out: string;
  eval: number;
  evalEvery: number;
  warmup: number;
  clip: number;
  boxed: number;
  boxedTerse: number;
  /** 1: pretrain without the dev split's items */
  withoutDev: number;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { steps: 2000, batch: 16, lr: 3e-3, seed: 0, out: 'models/char-lm', eval: 1319, evalEvery: 0, warmup: 30, clip: 1, boxed: 0.9, boxedTerse: 0.3, withoutDev: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '') as keyof Options;
    const value = argv[i + 1];
    if (!(key in o) || value === undefined) throw new Error(`unknown or incomplete option ${argv[i]}; options: ${Object.keys(o).map((k) => `--${k}`).join(' ')}`);
    (o as unknown as Record<string, unknown>)[key] = key === 'out' ? value : Number(value);
    if (key !== 'out' && !Number.isFinite(o[key] as number)) throw new Error(`--${key} needs a number, got ${value}`);
  }
  return o;
}

/** one training sequence: inputs/targets shifted by one, weights 1 on completion targets and PROMPT_WEIGHT on prompt targets */
export function supervisedDatum(p: Problem, boxed: boolean): Datum {
  const prompt = charPrompt(p.question);
  const at = p.answer.lastIndexOf('####');
  const completion = boxed ? charCompletionText(p.answer) : `${p.answer.slice(0, at).trim()} so ${p.answer.slice(at + 4).trim()}.`;
  const tokens = [...prompt, ...encodeChars(completion), CHAR_EOS];
  const n = tokens.length - 1;
  return {
    inputTokens: tokens.slice(0, -1),
    targetTokens: tokens.slice(1),
    samplingLogprobs: new Array(n).fill(0),
    advantages: Array.from({ length: n }, (_, t) => (t + 1 >= prompt.length ? 1 : PROMPT_WEIGHT)),
  };
}

/** terse questions end `how many now?` (about a third of arith) */
export function isTerse(p: Problem): boolean {
  return p.question.endsWith('how many now?');
}

/** lr_t = lr * t / warmup during warm-up, then lr * (0.1 + 0.9 * (1 + cos(pi * progress)) / 2) */
function learningRate(o: Options, step: number): number {
  if (step < o.warmup) return (o.lr * (step + 1)) / o.warmup;
  const progress = (step - o.warmup) / Math.max(1, o.steps - o.warmup);
  return o.lr * (0.1 + 0.45 * (1 + Math.cos(Math.PI * progress)));
}

function shuffled(n: number, rng: Prng): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

function weightsOf(params: ParamSet): ModelWeights {
  return { cfg: CHAR_LM_CONFIG, base: toTensors(params), loraScale: 0, trainBase: true };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  await ensureTfWasm();
  const trainAll = arithDataset({ split: 'train', seed: DATASET_SEED });
  const dev = arithDevProblems();
  const devQuestions = new Set(dev.map((p) => p.question));
  const train = o.withoutDev === 1 ? trainAll.filter((p) => !devQuestions.has(p.question)) : trainAll;
  const test = arithDataset({ split: 'test', seed: DATASET_SEED }).slice(0, o.eval);
  const styleRng = new Prng(o.seed, 2_000_003);
  const boxed = train.map((p) => styleRng.uniform() < (isTerse(p) ? o.boxedTerse : o.boxed));
  const datums = train.map((p, i) => supervisedDatum(p, boxed[i]));
  const params = initBaseParams(CHAR_LM_CONFIG, o.seed);
  const adam = initAdamW(params);
  const grads = zerosLike(params);
  const batchRng = new Prng(o.seed, 1_000_003);
  console.log(`pretrain: ${paramCount(params)} parameters, ${train.length} train problems (${boxed.filter(Boolean).length} with boxed answers), ${o.steps} steps of ${o.batch}, lr ${o.lr}, seed ${o.seed}`);
  let order = shuffled(datums.length, batchRng);
  let cursor = 0;
  const t0 = Date.now();
  let lossSum = 0;
  for (let step = 0; step < o.steps; step++) {
    if (cursor + o.batch > order.length) {
      order = shuffled(datums.length, batchRng);
      cursor = 0;
    }
    const batch = order.slice(cursor, cursor + o.batch).map((i) => datums[i]);
    cursor += o.batch;
    const w = weightsOf(params);
    try {
      const r = lossAndGrads(w, w.base, padDatums(w, batch), 'cross_entropy');
      lossSum += r.loss;
      let norm2 = 0;
      for (const p of params) for (const g of r.grads[p.name]) norm2 += g * g;
      const clip = Math.min(1, o.clip / Math.sqrt(norm2));
      params.forEach((p, i) => {
        const g = r.grads[p.name];
        const out = grads[i].data;
        for (let j = 0; j < out.length; j++) out[j] = g[j] * clip;
      });
    } finally {
      disposeTensors(w.base);
    }
    adamwStep(params, grads, adam, { learningRate: learningRate(o, step), beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0 });
    if ((step + 1) % 25 === 0) {
      console.log(`step ${step + 1} loss ${(lossSum / 25).toFixed(4)} elapsed ${((Date.now() - t0) / 1000).toFixed(0)}s`);
      lossSum = 0;
    }
    if (o.evalEvery > 0 && (step + 1) % o.evalEvery === 0 && step + 1 < o.steps) {
      const e = await scoreBaseParams(params, test.slice(0, 256));
      console.log(`  eval@${step + 1} (256 test): greedy ${e.greedyAccuracy.toFixed(3)} sampled reward ${e.sampledReward.toFixed(3)}`);
    }
  }
  const trainSeconds = (Date.now() - t0) / 1000;
  const e = await scoreBaseParams(params, test);
  console.log(`final (${test.length} test): greedy accuracy ${e.greedyAccuracy.toFixed(4)}, T=1 accuracy ${e.sampledAccuracy.toFixed(4)}, T=1 mean reward ${e.sampledReward.toFixed(4)}; train ${trainSeconds.toFixed(0)}s`);
  const d = await scoreBaseParams(params, dev);
  console.log(`final (${dev.length} dev, ${o.withoutDev === 1 ? 'left out of' : 'inside'} the corpus): greedy accuracy ${d.greedyAccuracy.toFixed(4)}, T=1 mean reward ${d.sampledReward.toFixed(4)}`);
  const out = path.resolve(o.out);
  const sha = writeBaseCheckpoint(out, CHAR_LM_CONFIG, params, {
    script: 'tools/pretrain/pretrain.ts',
    options: o,
    datasetSeed: DATASET_SEED,
    promptWeight: PROMPT_WEIGHT,
    trainSeconds: Math.round(trainSeconds),
    testItems: test.length,
    greedyAccuracy: e.greedyAccuracy,
    sampledAccuracy: e.sampledAccuracy,
    sampledMeanReward: e.sampledReward,
    devItems: dev.length,
    devInCorpus: o.withoutDev !== 1,
    devGreedyAccuracy: d.greedyAccuracy,
  });
  console.log(`wrote ${out} (sha256 ${sha})`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
