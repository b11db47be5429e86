// 4. Hot paths: the pure functions a step runs outside the model, as items per second and as a fraction of a
// measured embedded step (one gs1_kernel step through InProcessPipeline on the EmbeddedBackend, same run):
// the kernel baseline for a 64-rollout batch over a 256 window, the grader per completion, the paired
// Hoeffding rule over 1319 items (once per run, compared with one step all the same).
import { charCompletionText } from '@rx/backend';
import { EmbeddedBackend } from '@rx/embedded-model';
import { kernelBaseline, type ScoredRollout } from '@rx/estimators';
import { arithDataset } from '@rx/datasets';
import { gradeCompletion } from '@rx/grading';
import { cachedRendererResolver, InProcessPipeline } from '@rx/pipeline';
import { decisionRule, loadSpecText } from '@rx/spec';
import { pairedHoeffding } from '@rx/stats';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseNumericFlags } from './bench-args';
import { benchCheckpoint } from './bench-checkpoint';
import { fmt, median, verdict } from './bench-stats';
import { embeddedStepRequest } from './bench-steps';
import { loadSampler, machineInfo, machineLine, REPO_ROOT, reproduce, table, type Benchmark } from './benchmarks-doc';
import { mulberry32 } from '@rx/stats';

const FLAGS = {
  seconds: { default: 1, min: 0.05, max: 60, integer: false, help: 'seconds each hot path is timed for' },
  steps: { default: 2, min: 1, max: 10, help: 'timed embedded steps (after one warm-up)' },
};

/** a seeded uniform in [0, 1) (mulberry32), so every run times the same inputs */
const uniform = mulberry32;

/** calls f repeatedly for at least `seconds` (after a few warm-up calls); seconds per call */
function perCall(seconds: number, f: () => unknown): number {
  for (let i = 0; i < 5; i++) f();
  let calls = 0;
  const t0 = performance.now();
  let elapsed = 0;
  while (elapsed < seconds * 1000) {
    f();
    calls++;
    elapsed = performance.now() - t0;
  }
  return elapsed / 1000 / calls;
}

function rollouts(n: number, step: number, rnd: () => number): ScoredRollout[] {
  // phi as the sampler computes it: ln(prompt tokens) for prompts of 40-110 characters, mean prompt logprob in [-4, -1]
  return Array.from({ length: n }, (_, i) => ({
    rolloutId: `${step}-${i}`,
    step,
    promptId: `p-${step}-${i}`,
    reward: rnd() < 0.3 ? 1 : rnd() < 0.5 ? 0.1 : 0,
    phi: [Math.log(40 + 70 * rnd()), -4 + 3 * rnd()] as const,
  }));
}

export const hotPathsBenchmark: Benchmark = {
  name: 'hot-paths',
  summary: 'kernel baseline, grader and paired Hoeffding throughput as a fraction of an embedded step',
  async run(argv) {
    const o = parseNumericFlags('hot-paths', argv, FLAGS);
    const machine = machineInfo();
    const load = loadSampler();
    const t0 = performance.now();
    const rnd = uniform(7);

    // kernel baseline: 64 new rollouts against the 256 before them (window 256, bandwidth 0.5 as in the spec)
    const batch = rollouts(64, 4, rnd);
    const earlier = [0, 1, 2, 3].flatMap((s) => rollouts(64, s, rnd));
    const kernelCall = perCall(o.seconds, () => kernelBaseline(batch, earlier, { bandwidth: 0.5, windowSize: 256 }));

    // grader: completions like the model's: a third correct (the supervised form), a third a wrong number, a third noise
    const test = arithDataset({ split: 'test', seed: 0 }).slice(0, 300);
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789 +-*/=.\\{}';
    const cases = test.map((p, i) => {
      const right = charCompletionText(p.answer);
      const text = i % 3 === 0 ? right : i % 3 === 1 ? right.replace(/\\boxed\{(-?\d+)\}/, (_, n: string) => `\\boxed{${Number(n) + 1}}`) : Array.from({ length: 32 }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
      return { text, answer: p.answer, endedOnStop: i % 3 !== 2 };
    });
    let next = 0;
    const gradeCall = perCall(o.seconds, () => {
      const c = cases[next++ % cases.length];
      return gradeCompletion(c.text, c.answer, { endedOnStop: c.endedOnStop, formatCoef: 0.1 });
    });

    // paired Hoeffding over 1319 paired 0/1 items with the spec's decision rule
    const spec = loadSpecText(readFileSync(path.join(REPO_ROOT, 'specs', 'embedded.json'), 'utf8'));
    if (!spec.ok) throw new Error(`specs/embedded.json does not parse: ${spec.errors.join('; ')}`);
    const rule = decisionRule(spec.spec);
    const treatment = Array.from({ length: 1319 }, () => (rnd() < 0.4 ? 1 : 0));
    const baseline = Array.from({ length: 1319 }, () => (rnd() < 0.38 ? 1 : 0));
    const hoeffdingCall = perCall(o.seconds, () => pairedHoeffding(treatment, baseline, rule));

    // the denominator: gs1_kernel steps of the embedded model in this process
    const ckpt = benchCheckpoint();
    const work = mkdtempSync(path.join(os.tmpdir(), 'rx-bench-hot-'));
    const stepSeconds: number[] = [];
    const backend = new EmbeddedBackend({ dataDir: work, baseCheckpoint: ckpt.dir });
    try {
      const pipeline = new InProcessPipeline({ backend, renderers: cachedRendererResolver(), grade: gradeCompletion, concurrency: 16 });
      for (let step = 0; step <= o.steps; step++) {
        const t = performance.now();
        await pipeline.runStep(embeddedStepRequest('bench-hot', 'gs1_kernel', step));
        if (step > 0) stepSeconds.push((performance.now() - t) / 1000);
      }
    } finally {
      await backend.close();
      rmSync(work, { recursive: true, force: true });
      ckpt.cleanup();
    }
    const step = median(stepSeconds);
    const elapsed = (performance.now() - t0) / 1000;
    const loads = load.stop();

    const paths = [
      { name: 'kernel baseline, 64-rollout batch over a 256 window', unit: 'rollouts/s', itemsPerCall: 64, call: kernelCall, perStep: kernelCall },
      { name: 'grader (gradeCompletion), per completion', unit: 'completions/s', itemsPerCall: 1, call: gradeCall, perStep: 64 * gradeCall },
      { name: 'paired Hoeffding over 1319 items (once per run)', unit: 'items/s', itemsPerCall: 1319, call: hoeffdingCall, perStep: hoeffdingCall },
    ];
    const rows = paths.map((p) => [p.name, `${fmt(p.call * 1e6)} µs`, `${fmt(p.itemsPerCall / p.call)} ${p.unit}`, `${fmt(p.perStep * 1000)} ms`, `${fmt((100 * p.perStep) / step, 2)} %`]);
    const worst = Math.max(...paths.map((p) => p.perStep / step));
    const markdown = [
      '## 4. Hot paths',
      '',
      `Command: \`${reproduce('hot-paths', argv)}\` (${fmt(elapsed)} s). ${machineLine(machine, loads)}`,
      '',
      `Each path timed for ${o.seconds} s in this process (seeded inputs); the step is the median of ${o.steps} gs1_kernel steps ` +
        `(64 rollouts, after one warm-up) of the EmbeddedBackend on ${ckpt.description}, through InProcessPipeline: **${fmt(step)} s**.`,
      '',
      table(['path', 'per call', 'throughput', 'per step', 'share of a step'], rows),
      '',
      `- Largest share of a step: ${fmt(100 * worst, 2)} %: ${verdict(100 * worst, 1, 'max', ' %')}.`,
      '- "per step": what one step runs: the kernel once for its batch, the grader on 64 completions; the Hoeffding rule runs once per run, not per step.',
    ].join('\n');
    return {
      markdown,
      lines: [`hot-paths: ${paths.map((p) => `${p.name.split(',')[0].split(' (')[0]} ${fmt((100 * p.perStep) / step, 2)} % of a step`).join('; ')} (target < 1 %)`],
    };
  },
};
