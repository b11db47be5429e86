// TEST FIXTURE. Twelve known bugs for the correctness preflight, injected through test-only wrappers of the loop
// and test-only subclasses/wrappers of the embedded backend (never flags in production code), and the harness
// that runs the real preflight phase against them (fixed batches sampled from a real shared init of the embedded
// model, every check through the backend): it passes on the unmodified code and fails on each bug with the
// failing check named and preflight.json kept. Used by preflight-trainer-bugs.spec.ts and preflight-loop-bugs.spec.ts.
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { rendererFor, TinkerApiError, type Datum, type LoraConfig, type PolicyBackend, type TrainingClient } from '@rx/backend';
import type { GradedBatch, TrainStep } from '@rx/contracts';
import { emptyWindow, type ScoredRollout } from '@rx/estimators';
import { EmbeddedBackend, EmbeddedTrainingClient, importanceSamplingPositionLoss, tf, type PositionLoss } from '@rx/embedded-model';
import { computeAdvantages, datumsOf, scoredRollouts, type AdvantageStageDeps, type RolloutWindowStore } from '@rx/pipeline';
import { preflightResultSchema, type PreflightResult } from '@rx/preflight';
import { loadSpecText, type ExperimentSpec } from '@rx/spec';
import { RunStopped } from '../../../experiment/experiment-context';
import { loadExperimentData, type ExperimentData } from '../../../experiment/experiment-data';
import { REPO_ROOT } from '../../../infra/repo-root';
import type { ProgressReporter } from '../../../progress/progress.reporter';
import { RunDir, type SharedInitResult } from '@rx/run-dir';
import { runSharedInit } from '../../shared-init.phase';
import { RX_LOOP, type LoopUnderTest } from '../loop-under-test';
import { batchSha256, type FixedBatches } from '../fixed-batch';
import { fixedBatchesOf, runPreflight, type PreflightContext } from '../preflight.phase';

const parsed = loadSpecText(readFileSync(path.join(REPO_ROOT, 'specs', 'embedded.json'), 'utf8'));
if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
const spec: ExperimentSpec = parsed.spec;

// ---- test-only trainer bugs: the embedded trainer with another loss, or an optimizer that steps twice ----------

function trainerWithLoss(dataDir: string, loss: PositionLoss): EmbeddedBackend {
  class MutantClient extends EmbeddedTrainingClient {
    protected override readonly trainingLoss = loss;
  }
  class MutantBackend extends EmbeddedBackend {
    override async createLoraTrainingClient(config: LoraConfig): Promise<EmbeddedTrainingClient> {
      return new MutantClient(this, await this.loadBase(), config, 'mutant');
    }
  }
  return new MutantBackend({ dataDir });
}

/** `inner` as a service that refuses an optim_step at learning rate 0 (HTTP 400, as a strict service might) */
export function optimizerRefusingLrZero(inner: PolicyBackend): PolicyBackend {
  return {
    kind: inner.kind,
    async createLoraTrainingClient(config: LoraConfig): Promise<TrainingClient> {
      const c = await inner.createLoraTrainingClient(config);
      return {
        modelId: c.modelId,
        forwardBackward: (d, l) => c.forwardBackward(d, l),
        optimStep: async (p) => {
          if (p.learningRate === 0) throw new TinkerApiError('POST /api/v1/optim_step', 400, '{"detail":"learning_rate must be > 0"}', 1, 'learning_rate must be > 0');
          return c.optimStep(p);
        },
        saveWeightsForSampler: (n) => c.saveWeightsForSampler(n),
        saveState: (n) => c.saveState(n),
        loadState: (p) => c.loadState(p),
      };
    },
    createSamplingClient: (p) => inner.createSamplingClient(p),
    ping: () => inner.ping(),
    close: async () => undefined,
  };
}

/** `inner` with every optim_step applied twice; closing it closes `inner` too, unless `closesInner` is false (a shared backend) */
export function optimizerSteppingTwice(inner: PolicyBackend, opts: { closesInner: boolean } = { closesInner: true }): PolicyBackend {
  return {
    kind: inner.kind,
    async createLoraTrainingClient(config: LoraConfig): Promise<TrainingClient> {
      const c = await inner.createLoraTrainingClient(config);
      return {
        modelId: c.modelId,
        forwardBackward: (d, l) => c.forwardBackward(d, l),
        optimStep: async (p) => {
          await c.optimStep(p);
          return c.optimStep(p);
        },
        saveWeightsForSampler: (n) => c.saveWeightsForSampler(n),
        saveState: (n) => c.saveState(n),
        loadState: (p) => c.loadState(p),
      };
    },
    createSamplingClient: (p) => inner.createSamplingClient(p),
    ping: () => inner.ping(),
    close: async () => (opts.closesInner ? inner.close() : undefined),
  };
}

// ---- test-only loop bugs: wrappers of the advantage stage and the Datum builder ----------------------------------

const withDatums = (f: (d: Datum) => Datum): LoopUnderTest => ({ computeAdvantages, datumsOf: (s) => datumsOf(s).map(f) });

/** the real stage (its window store advances), then every advantage replaced by a buggy estimator's */
function withAdvantages(estimate: (batch: GradedBatch, earlier: readonly ScoredRollout[]) => number[] | null): LoopUnderTest {
  return {
    datumsOf,
    async computeAdvantages(batch: GradedBatch, deps: AdvantageStageDeps): Promise<TrainStep> {
      const before = await deps.windows.windowBefore({ runId: batch.runId, arm: batch.arm }, batch.step, 256);
      const step = await computeAdvantages(batch, deps);
      const a = estimate(batch, before.rollouts);
      return a ? { ...step, rollouts: step.rollouts.map((r, i) => ({ ...r, advantage: a[i], baseline: r.reward - a[i] })) } : step;
    },
  };
}

/** the kernel baseline with one of the bugs the issue lists; null for a GRPO batch */
function buggyKernel(bug: { selfWeight?: boolean; hSquared?: boolean; rawPhi?: boolean }) {
  return (batch: GradedBatch, earlier: readonly ScoredRollout[]): number[] | null => {
    if (batch.plan.advantage.estimator !== 'kernel_cross_prompt_baseline') return null;
    const h = batch.plan.advantage.bandwidth;
    const window = [...scoredRollouts(batch), ...earlier];
    const n = window.length;
    const stat = (k: 0 | 1) => {
      const m = window.reduce((s, r) => s + r.phi[k], 0) / n;
      const sd = Math.sqrt(window.reduce((s, r) => s + (r.phi[k] - m) ** 2, 0) / n);
      return bug.rawPhi ? { m: 0, sd: 1 } : { m, sd: sd < 1e-12 ? 1 : sd };
    };
    const s0 = stat(0);
    const s1 = stat(1);
    const z = window.map((r) => [(r.phi[0] - s0.m) / s0.sd, (r.phi[1] - s1.m) / s1.sd]);
    const denom = bug.hSquared ? h * h : 2 * h * h;
    return batch.rollouts.map((r, i) => {
      let mass = 0;
      let weighted = 0;
      for (let j = 0; j < n; j++) {
        if (j === i && !bug.selfWeight) continue;
        const w = Math.exp(-((z[i][0] - z[j][0]) ** 2 + (z[i][1] - z[j][1]) ** 2) / denom);
        mass += w;
        weighted += w * window[j].reward;
      }
      return r.reward - weighted / mass;
    });
  };
}

/** a window store that forgets every earlier step: the kernel sees the current batch only */
const forgetfulWindows: RolloutWindowStore = {
  windowBefore: async (_key, _step, capacity) => emptyWindow(capacity),
  commitAfter: async (_key, _step, window) => window,
  latest: async () => null,
};

export interface InjectedBug {
  name: string;
  /** the check that must fail */
  expect: string;
  loop?: LoopUnderTest;
  backend?: (dataDir: string) => PolicyBackend;
}

/** bugs of the trainer (the backend) */
export const TRAINER_BUGS: InjectedBug[] = [
  { name: 'sign-flipped trainer loss', expect: 'backend_loss', backend: (d) => trainerWithLoss(d, (lp, s, a) => tf.sum(tf.mul(tf.exp(tf.sub(lp, s)), a)) as tf.Scalar) },
  { name: 'exp dropped from the importance ratio', expect: 'backend_loss', backend: (d) => trainerWithLoss(d, (lp, s, a) => tf.neg(tf.sum(tf.mul(tf.sub(lp, s), a))) as tf.Scalar) },
  {
    name: 'loss divided by the token count',
    expect: 'backend_loss',
    backend: (d) => trainerWithLoss(d, (lp, s, a) => tf.div(importanceSamplingPositionLoss(lp, s, a), tf.sum(tf.cast(tf.notEqual(a, 0), 'float32'))) as tf.Scalar),
  },
  {
    name: "the sampler's logprobs replaced by the learner's",
    expect: 'backend_loss',
    backend: (d) => trainerWithLoss(d, (lp, _s, a) => importanceSamplingPositionLoss(lp, tf.tensor1d(lp.dataSync() as Float32Array), a)),
  },
  { name: 'optimizer step applied twice', expect: 'update_direction', backend: (d) => optimizerSteppingTwice(new EmbeddedBackend({ dataDir: d })) },
];

/** bugs of the loop: the advantage stage and the Datum builder */
export const LOOP_BUGS: InjectedBug[] = [
  { name: 'prompt tokens carrying the advantage', expect: 'baseline_loss', loop: withDatums((d) => ({ ...d, advantages: d.advantages.map(() => d.advantages[d.advantages.length - 1]) })) },
  { name: 'targets shifted by one', expect: 'baseline_datums', loop: withDatums((d) => ({ ...d, targetTokens: d.inputTokens.slice() })) },
  { name: 'kernel self-weight counted', expect: 'reference_advantages', loop: withAdvantages(buggyKernel({ selfWeight: true })) },
  { name: 'h^2 for 2h^2 in the kernel', expect: 'reference_advantages', loop: withAdvantages(buggyKernel({ hSquared: true })) },
  {
    name: 'kernel window not carried across steps',
    expect: 'reference_advantages',
    loop: { datumsOf, computeAdvantages: (batch, deps) => computeAdvantages(batch, { ...deps, windows: batch.plan.advantage.estimator === 'group_mean' ? deps.windows : forgetfulWindows }) },
  },
  { name: 'phi not standardised', expect: 'reference_advantages', loop: withAdvantages(buggyKernel({ rawPhi: true })) },
  {
    name: 'group mean over the batch instead of the group',
    expect: 'baseline_advantages',
    loop: withAdvantages((batch) => {
      if (batch.plan.advantage.estimator !== 'group_mean') return null;
      const mean = batch.rollouts.reduce((s, r) => s + r.reward, 0) / batch.rollouts.length;
      return batch.rollouts.map((r) => r.reward - mean);
    }),
  },
];

/**
 * Defines the tests: the real preflight on the embedded backend against each bug (and, with `clean`, on the
 * unmodified code first), from one shared init and one sampling of the fixed batches.
 */
export function describePreflightAgainst(title: string, bugs: readonly InjectedBug[], opts: { clean: boolean }): void {
  describe(title, () => {
    let root: string;
    let data: ExperimentData;
    let init: SharedInitResult;
    let real: EmbeddedBackend;
    /** sampled once from the shared init (the bugs are in training and advantage code, not in sampling) */
    let fixed: FixedBatches;
    const lines: string[] = [];
    const progress: ProgressReporter = { info: (l) => lines.push(l), warn: (l) => lines.push(l), arm: () => undefined, close: () => undefined };

    async function context(backend: PolicyBackend, name: string): Promise<PreflightContext> {
      const dir = new RunDir(path.join(root, 'runs', name));
      return { spec, backend, renderer: await rendererFor(spec.base_model), data, dir, progress, concurrency: 4, manifest: { runId: `pf-${name.replace(/[^a-z0-9]+/gi, '-')}` } };
    }

    beforeAll(async () => {
      root = mkdtempSync(path.join(tmpdir(), 'rx-preflight-'));
      data = await loadExperimentData(spec, { repoRoot: REPO_ROOT });
      real = new EmbeddedBackend({ dataDir: path.join(root, 'backend') });
      init = await runSharedInit(await context(real, 'init'));
      fixed = await fixedBatchesOf(await context(real, 'fixed'), init);
    });
    afterAll(async () => {
      await real.close();
      rmSync(root, { recursive: true, force: true });
    });

    if (opts.clean) {
      it('passes on the unmodified loop and backend, with real float32-vs-float64 errors within the spec tolerances', async () => {
        const ctx = await context(real, 'clean');
        const result = await runPreflight(ctx, init, RX_LOOP);
        // the batches a run samples for itself are the ones sampled once for the bugs below (seeded sampling)
        expect(result.fixed_inputs.map((f) => f.sha256)).toEqual([batchSha256(fixed.grpo), batchSha256(fixed.gs1Window, fixed.gs1)]);
        expect([result.pass, result.failures]).toEqual([true, []]);
        expect(preflightResultSchema.parse(ctx.dir.readJson(ctx.dir.preflightFile))).toEqual(result);
        const byId = Object.fromEntries(result.checks.map((c) => [c.id, c]));
        // the backend's float32 loss against float64 recomputation: a real difference, not a self-comparison
        expect(byId['backend_loss'].errors.max_abs_error).toBeGreaterThan(0);
        expect(byId['backend_loss'].errors.reference_max_abs).toBeGreaterThan(1);
        for (const k of ['baseline_loss', 'baseline_gradient', 'reference_loss', 'reference_gradient'] as const) {
          expect(result.paths[0].errors[k].reference_max_abs).toBeGreaterThan(0);
          expect(result.paths[0].errors[k].max_abs_error).toBeGreaterThan(0);
          expect(result.paths[0].errors[k].cosine_similarity).toBeGreaterThan(0.99999);
        }
        expect(result.update_direction.delta_loss).toBeLessThan(0);
        expect(result.update_direction.warm_copy_rel_error).toBeLessThan(0.01);
        expect(result.shared_init.untouched).toBe(true);
        expect(result.fixed_inputs.map((f) => f.rollouts)).toEqual([64, 64]);
        expect(result.paths[0].baseline_revision).toMatch(/^tinker-cookbook [0-9a-f]{40} .* sha256 [0-9a-f]{64}$/);
        expect(result.paths[0].reference_revision).toMatch(/kernel-baseline\.reference\.ts sha256 [0-9a-f]{64}/);
        expect(lines.some((l) => /backend_loss +max_abs [0-9.e+-]+ .*pass$/.test(l))).toBe(true);
        // the fresh copy after the checks, within the same-output tolerance of the shared init (rx's default here)
        expect(result.shared_init.same_output).toEqual({ tolerance: { atol: 1e-2, rtol: 0, source: 'rx default' }, max_abs_diff: 0, pass: true });
        expect(result.update_direction.warm_copy).toMatch(/^stepped once at lr 0 /);
      });

      it('a service that refuses the optim_step at lr 0: one line, copy B reloaded from the saved state instead, no crash', async () => {
        lines.length = 0;
        const ctx = await context(optimizerRefusingLrZero(real), 'refuses-lr0');
        const result = await runPreflight(ctx, init, RX_LOOP, fixed);
        expect([result.pass, result.failures]).toEqual([true, []]);
        expect(result.update_direction.warm_copy).toMatch(/^the service refused an optim_step at lr 0 \(.*HTTP 400.*\); B reloaded from the saved state instead/);
        const said = lines.filter((l) => l.includes('refused an optim_step at lr 0'));
        expect(said).toHaveLength(1);
        expect(said[0].split('\n')).toHaveLength(1);
      });
    }

    it.each(bugs.map((m) => [m.name, m] as const))('fails on: %s', async (_name, m) => {
      const backend = m.backend ? m.backend(path.join(root, 'backend')) : real;
      const ctx = await context(backend, m.name);
      let stopped: unknown = null;
      try {
        await runPreflight(ctx, init, m.loop ?? RX_LOOP, fixed);
      } catch (err) {
        stopped = err;
      } finally {
        if (backend !== real) await backend.close();
      }
      expect(stopped).toBeInstanceOf(RunStopped);
      expect((stopped as RunStopped).message).toContain(m.expect);
      const kept: PreflightResult = preflightResultSchema.parse(ctx.dir.readJson(ctx.dir.preflightFile));
      expect(kept.pass).toBe(false);
      expect(kept.failed_checks).toContain(m.expect);
      expect(kept.checks.find((c) => c.id === m.expect)!.pass).toBe(false);
    });
  });
}
