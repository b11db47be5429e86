// Benchmark: GRPO on arith through the PolicyBackend interface with the embedded model. For each learning
// rate: the shared seed-0 LoRA initialisation (saveState/loadState), 20 steps of 8 prompts x 8 samples at
// temperature 1, group-mean advantages (r - mean of the group), importance-sampling loss, AdamW; greedy
// accuracy on the first --eval arith test items before and after. Also times one training step
// (64 datums), one sampling round (64 rollouts) and reports peak RSS.
//
//   node -r ./tools/register.js tools/bench/embedded-rl.ts [--lrs 4e-5,1e-3] [--steps 20] [--eval 320] [--out runs/bench/embedded-rl] [--base models/char-lm]
import { CHAR_EOS, charPrompt, type Datum, type SampledSequence } from '@rx/backend';
import { arithDataset, takeTrainPrompts, type Problem } from '@rx/datasets';
import { EMBEDDED_BASE_MODEL, EmbeddedBackend, type EmbeddedSamplingClient } from '@rx/embedded-model';
import { gradeCompletion } from '@rx/grading';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { completionText, scoreArith } from '../pretrain/arith-eval';

const GROUPS = 8;
const GROUP_SIZE = 8;
const RANK = 32;
const SEED = 0;
const N_TRAIN_PROMPTS = 2560;

interface Options {
  lrs: number[];
  steps: number;
  eval: number;
  out: string;
  base?: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { lrs: [4e-5, 1e-3], steps: 20, eval: 320, out: 'runs/bench/embedded-rl' };
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i].replace(/^--/, ''), argv[i + 1]];
    if (value === undefined) throw new Error(`option ${argv[i]} needs a value`);
    if (key === 'lrs') o.lrs = value.split(',').map(Number);
    else if (key === 'steps') o.steps = Number(value);
    else if (key === 'eval') o.eval = Number(value);
    else if (key === 'out') o.out = value;
    else if (key === 'base') o.base = value;
    else throw new Error(`unknown option ${argv[i]} (--lrs --steps --eval --out --base)`);
  }
  if (o.lrs.some((x) => !(x > 0)) || !(o.steps > 0) || !(o.eval > 0)) throw new Error('--lrs, --steps and --eval must be positive');
  return o;
}

/** prompt + completion as one sequence; inputs drop the last token, targets the first; prompt positions carry logprob 0 and advantage 0 */
function datumOf(prompt: number[], s: SampledSequence, advantage: number): Datum {
  const tokens = [...prompt, ...s.tokens];
  const promptTargets = prompt.length - 1;
  return {
    inputTokens: tokens.slice(0, -1),
    targetTokens: tokens.slice(1),
    samplingLogprobs: [...new Array(promptTargets).fill(0), ...s.logprobs],
    advantages: [...new Array(promptTargets).fill(0), ...s.tokens.map(() => advantage)],
  };
}

function reward(s: SampledSequence, p: Problem): number {
  const { text, endedOnStop } = completionText(s);
  return gradeCompletion(text, p.answer, { endedOnStop }).reward;
}

async function greedy(sc: EmbeddedSamplingClient, test: Problem[]): Promise<{ accuracy: number; formatOk: number }> {
  return scoreArith((p, sp) => sc.sampleBatch(p, sp), test, { temperature: 0 });
}

interface ArmResult {
  lr: number;
  before: number;
  after: number;
  formatOkBefore: number;
  formatOkAfter: number;
  rewardByStep: number[];
  sampleSeconds: number[];
  trainSeconds: number[];
  datumTokens: number[];
}

async function runArm(backend: EmbeddedBackend, init: string, lr: number, o: Options, prompts: Problem[], test: Problem[], run: string): Promise<ArmResult> {
  const tc = await backend.createLoraTrainingClient({ baseModel: EMBEDDED_BASE_MODEL, rank: RANK, seed: SEED });
  await tc.loadState(init);
  const arm = `lr-${lr}`;
  const res: ArmResult = { lr, before: 0, after: 0, formatOkBefore: 0, formatOkAfter: 0, rewardByStep: [], sampleSeconds: [], trainSeconds: [], datumTokens: [] };
  const g0 = await greedy(await backend.createSamplingClient(await tc.saveWeightsForSampler(`${run}/${arm}/step-0000`)), test);
  res.before = g0.accuracy;
  res.formatOkBefore = g0.formatOk;
  for (let step = 0; step < o.steps; step++) {
    const sc = await backend.createSamplingClient(await tc.saveWeightsForSampler(`${run}/${arm}/step-${String(step).padStart(4, '0')}`));
    const batch = prompts.slice(step * GROUPS, (step + 1) * GROUPS);
    const promptTokens = batch.map((p) => charPrompt(p.question));
    const rows = promptTokens.flatMap((p) => Array.from({ length: GROUP_SIZE }, () => p));
    let t0 = performance.now();
    const samples = await sc.sampleBatch(rows, { maxTokens: 128, temperature: 1, seed: 1000 + step, stopTokens: [CHAR_EOS] });
    res.sampleSeconds.push((performance.now() - t0) / 1000);
    const rewards = samples.map((s, i) => reward(s, batch[Math.floor(i / GROUP_SIZE)]));
    const datums: Datum[] = [];
    for (let g = 0; g < GROUPS; g++) {
      const group = rewards.slice(g * GROUP_SIZE, (g + 1) * GROUP_SIZE);
      // A_i = r_i - mean_j r_j over the group
      const mean = group.reduce((a, b) => a + b, 0) / GROUP_SIZE;
      for (let k = 0; k < GROUP_SIZE; k++) datums.push(datumOf(promptTokens[g], samples[g * GROUP_SIZE + k], group[k] - mean));
    }
    res.datumTokens.push(datums.reduce((n, d) => n + d.inputTokens.length, 0) / datums.length);
    t0 = performance.now();
    await tc.forwardBackward(datums, 'importance_sampling');
    await tc.optimStep({ learningRate: lr, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
    res.trainSeconds.push((performance.now() - t0) / 1000);
    res.rewardByStep.push(rewards.reduce((a, b) => a + b, 0) / rewards.length);
    console.log(
      `  lr ${lr} step ${step + 1}: mean reward ${res.rewardByStep[step].toFixed(3)}, sample ${res.sampleSeconds[step].toFixed(2)}s, train ${res.trainSeconds[step].toFixed(2)}s, ${res.datumTokens[step].toFixed(0)} tokens/datum`,
    );
  }
  const g1 = await greedy(await backend.createSamplingClient(await tc.saveWeightsForSampler(`${run}/${arm}/step-${String(o.steps).padStart(4, '0')}`)), test);
  res.after = g1.accuracy;
  res.formatOkAfter = g1.formatOk;
  return res;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dataDir = path.resolve(o.out);
  fs.mkdirSync(dataDir, { recursive: true });
  const backend = new EmbeddedBackend({ dataDir, baseCheckpoint: o.base });
  const prompts = takeTrainPrompts(arithDataset({ split: 'train', seed: 0 }), N_TRAIN_PROMPTS, 0);
  const test = arithDataset({ split: 'test', seed: 0 }).slice(0, o.eval);
  const run = 'bench';
  const init = await (await backend.createLoraTrainingClient({ baseModel: EMBEDDED_BASE_MODEL, rank: RANK, seed: SEED })).saveState(`${run}/init`);
  const results: ArmResult[] = [];
  for (const lr of o.lrs) {
    console.log(`lr ${lr}:`);
    const r = await runArm(backend, init, lr, o, prompts, test, run);
    results.push(r);
    console.log(`lr ${lr}: greedy accuracy on ${test.length} test items ${r.before.toFixed(4)} -> ${r.after.toFixed(4)} (well formatted ${r.formatOkBefore.toFixed(2)} -> ${r.formatOkAfter.toFixed(2)}); mean reward first 5 steps ${mean(r.rewardByStep.slice(0, 5)).toFixed(3)}, last 5 ${mean(r.rewardByStep.slice(-5)).toFixed(3)}`);
  }
  const all = results;
  const summary = {
    steps: o.steps,
    evalItems: test.length,
    arms: results.map((r) => ({ lr: r.lr, greedyBefore: r.before, greedyAfter: r.after, formatOkBefore: r.formatOkBefore, formatOkAfter: r.formatOkAfter, rewardFirst5: mean(r.rewardByStep.slice(0, 5)), rewardLast5: mean(r.rewardByStep.slice(-5)), rewardByStep: r.rewardByStep })),
    trainStepSeconds: mean(all.flatMap((r) => r.trainSeconds)),
    sampleSeconds: mean(all.flatMap((r) => r.sampleSeconds)),
    tokensPerDatum: mean(all.flatMap((r) => r.datumTokens)),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  fs.writeFileSync(path.join(dataDir, 'summary.json'), JSON.stringify(summary, null, 1) + '\n');
  console.log(
    `training step (64 datums, ~${summary.tokensPerDatum.toFixed(0)} tokens): ${summary.trainStepSeconds.toFixed(2)}s; sampling 64 rollouts: ${summary.sampleSeconds.toFixed(2)}s; peak RSS ${summary.peakRssMiB} MiB`,
  );
  await backend.close();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
