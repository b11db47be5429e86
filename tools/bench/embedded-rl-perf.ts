// Timings of the embedded backend on this machine: one training step (forwardBackward + optimStep on 64
// datums of ~96 tokens), one sampling round (8 prompts x 8 rollouts at temperature 1, to the stop token),
// greedy decoding of the 1319 arith test items, resident memory and live tensors; optionally the same
// training step on tfjs's pure-JS `cpu` backend (--cpu 1) for the wasm-vs-cpu comparison.
//
//   node -r ./tools/register.js tools/bench/embedded-rl-perf.ts [--reps 5] [--cpu 0] [--base models/char-lm]
import { CHAR_EOS, charPrompt, type Datum } from '@rx/backend';
import { arithDataset } from '@rx/datasets';
import { EMBEDDED_BASE_MODEL, EmbeddedBackend, tf } from '@rx/embedded-model';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

interface Options {
  reps: number;
  cpu: number;
  base?: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { reps: 5, cpu: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i].replace(/^--/, ''), argv[i + 1]];
    if (value === undefined) throw new Error(`option ${argv[i]} needs a value`);
    if (key === 'reps') o.reps = Number(value);
    else if (key === 'cpu') o.cpu = Number(value);
    else if (key === 'base') o.base = value;
    else throw new Error(`unknown option ${argv[i]} (--reps --cpu --base)`);
  }
  return o;
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)] };
};
const fmt = (x: { min: number; median: number }) => `median ${x.median.toFixed(2)}s (min ${x.min.toFixed(2)}s)`;

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-embedded-perf-'));
  const backend = new EmbeddedBackend({ dataDir, baseCheckpoint: o.base });
  try {
    const tc = await backend.createLoraTrainingClient({ baseModel: EMBEDDED_BASE_MODEL, rank: 32, seed: 0 });
    const sc = await backend.createSamplingClient(await tc.saveWeightsForSampler('perf/step-0000'));
    const test = arithDataset({ split: 'test', seed: 0 });
    const prompts = test.slice(0, 8).flatMap((p) => Array.from({ length: 8 }, () => charPrompt(p.question)));
    // 64 datums of 96 tokens: prompt then a sampled completion, padded with more samples' tokens when short
    const samples = await sc.sampleBatch(prompts, { maxTokens: 128, temperature: 1, seed: 1, stopTokens: [CHAR_EOS] });
    const datums: Datum[] = prompts.map((p, i) => {
      const tokens = [...p, ...samples[i].tokens, ...samples[(i + 1) % 64].tokens, ...samples[(i + 2) % 64].tokens].slice(0, 97);
      const n = tokens.length - 1;
      return { inputTokens: tokens.slice(0, -1), targetTokens: tokens.slice(1), samplingLogprobs: new Array(n).fill(-1), advantages: Array.from({ length: n }, (_, t) => (t >= p.length - 1 ? 0.5 : 0)) };
    });
    const tokensPerDatum = datums.reduce((a, d) => a + d.inputTokens.length, 0) / datums.length;
    const train: number[] = [];
    const sample: number[] = [];
    for (let r = 0; r < o.reps; r++) {
      let t0 = performance.now();
      await tc.forwardBackward(datums, 'importance_sampling');
      await tc.optimStep({ learningRate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8 });
      train.push((performance.now() - t0) / 1000);
      t0 = performance.now();
      await sc.sampleBatch(prompts, { maxTokens: 128, temperature: 1, seed: 100 + r, stopTokens: [CHAR_EOS] });
      sample.push((performance.now() - t0) / 1000);
    }
    const tensorsBefore = tf.memory().numTensors;
    const t0 = performance.now();
    const greedy = await sc.sampleBatch(test.map((p) => charPrompt(p.question)), { maxTokens: 128, temperature: 0, stopTokens: [CHAR_EOS] });
    const evalSeconds = (performance.now() - t0) / 1000;
    const meanLen = greedy.reduce((a, s) => a + s.tokens.length, 0) / greedy.length;
    console.log(`training step, 64 datums x ${tokensPerDatum.toFixed(0)} tokens (LoRA r32): ${fmt(stats(train))}`);
    console.log(`sampling 64 rollouts (8 prompts x 8, T=1, to <eos>): ${fmt(stats(sample))}`);
    console.log(`greedy decoding of ${test.length} test items (${meanLen.toFixed(1)} tokens each): ${evalSeconds.toFixed(1)}s`);
    console.log(`live tensors ${tf.memory().numTensors} (before eval ${tensorsBefore}); peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`);
    if (o.cpu) {
      await tf.setBackend('cpu');
      const cpuTc = await new EmbeddedBackend({ dataDir, baseCheckpoint: o.base }).createLoraTrainingClient({ baseModel: EMBEDDED_BASE_MODEL, rank: 32, seed: 0 });
      const t1 = performance.now();
      await cpuTc.forwardBackward(datums, 'importance_sampling');
      console.log(`the same training step on tfjs's cpu backend: ${((performance.now() - t1) / 1000).toFixed(2)}s`);
    }
  } finally {
    await backend.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
