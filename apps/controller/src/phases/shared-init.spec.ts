// The shared initialisation compares the arms' outputs within the same-output tolerance: on the real embedded
// backend (bit-identical arms), and on the same backend behind a wrapper whose forward_backward logprobs move by a
// different amount on every call (what a batched GPU service does): within the tolerance the run goes on with the
// measured difference as evidence; beyond it the phase stops with the numbers in one line.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { rendererFor, type LoraConfig, type PolicyBackend, type TrainingClient } from '@rx/backend';
import { EmbeddedBackend } from '@rx/embedded-model';
import { RunDir, sharedInitSchema } from '@rx/run-dir';
import { loadSpecText, type ExperimentSpec } from '@rx/spec';
import { mulberry32 } from '@rx/stats';
import { RunStopped } from '../experiment/experiment-context';
import { loadExperimentData, type ExperimentData } from '../experiment/experiment-data';
import { REPO_ROOT } from '../infra/repo-root';
import type { ProgressReporter } from '../progress/progress.reporter';
import { runSharedInit } from './shared-init.phase';

jest.setTimeout(120_000);

const parsed = loadSpecText(readFileSync(path.join(REPO_ROOT, 'specs', 'embedded.json'), 'utf8'));
if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
const baseSpec: ExperimentSpec = parsed.spec;

/** `inner` with every forward_backward's logprobs moved by up to ±`amplitude`, differently on every call */
function noisyLogprobs(inner: PolicyBackend, amplitude: number, seed: number): PolicyBackend {
  const rand = mulberry32(seed);
  return {
    kind: inner.kind,
    async createLoraTrainingClient(config: LoraConfig): Promise<TrainingClient> {
      const c = await inner.createLoraTrainingClient(config);
      return {
        modelId: c.modelId,
        forwardBackward: async (d, l) => {
          const out = await c.forwardBackward(d, l);
          return { ...out, logprobs: out.logprobs.map((row) => row.map((x) => x + amplitude * (2 * rand() - 1))) };
        },
        optimStep: (p) => c.optimStep(p),
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

describe('shared initialisation: the arms give the same output within the stated tolerance', () => {
  let root: string;
  let real: EmbeddedBackend;
  let data: ExperimentData;
  const lines: string[] = [];
  const progress: ProgressReporter = { info: (l) => lines.push(l), warn: (l) => lines.push(l), arm: () => undefined, close: () => undefined };

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'rx-shared-init-'));
    real = new EmbeddedBackend({ dataDir: path.join(root, 'backend') });
    data = await loadExperimentData(baseSpec, { repoRoot: REPO_ROOT });
  });
  afterAll(async () => {
    await real.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function run(name: string, backend: PolicyBackend, spec: ExperimentSpec = baseSpec) {
    const dir = new RunDir(path.join(root, name));
    lines.length = 0;
    const result = runSharedInit({ spec, backend, renderer: await rendererFor(spec.base_model), data, dir, progress, manifest: { runId: `si-${name}` } });
    return { result, dir };
  }

  it('the embedded backend: bit-identical arms, a measured difference of 0 against rx default tolerance', async () => {
    const { result, dir } = await run('exact', real);
    const r = await result;
    expect(r.identical).toBe(true);
    expect(r.same_output).toEqual({ tolerance: { atol: 1e-2, rtol: 0, source: 'rx default' }, max_abs_diff: 0, pass: true });
    expect(sharedInitSchema.parse(dir.readJson(dir.path('shared-init.json'))).probe_logprobs).toEqual(r.probe_logprobs);
  });

  it('logprobs that move by ~1e-3 per call: not bit-identical, within the tolerance, the difference kept as evidence', async () => {
    const r = await (await run('noise-1e-3', noisyLogprobs(real, 1e-3, 1))).result;
    expect(r.identical).toBe(false);
    expect(r.same_output!.pass).toBe(true);
    expect(r.same_output!.max_abs_diff).toBeGreaterThan(5e-4);
    expect(r.same_output!.max_abs_diff).toBeLessThanOrEqual(2e-3);
    expect(lines.some((l) => /max \|logprob difference\| [0-9.e+-]+, tolerance atol 0\.01 \(rx's default.*: the same$/.test(l))).toBe(true);
  });

  it('beyond the tolerance: the phase stops with the measured difference and the tolerance in one line', async () => {
    const { result, dir } = await run('noise-5e-2', noisyLogprobs(real, 5e-2, 2));
    const err = await result.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunStopped);
    const message = (err as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(/^the arms loaded from the shared initial state differ on the fixed batch beyond the tolerance: max \|logprob difference\| [0-9.]+e-2, tolerance atol 0\.01 \(rx's default/);
    // the evidence is written before the stop
    expect(sharedInitSchema.parse(dir.readJson(dir.path('shared-init.json'))).same_output!.pass).toBe(false);
  });

  it("the spec's own tolerance wins over rx's default and is named as the spec's", async () => {
    const spec: ExperimentSpec = { ...baseSpec, correctness_preflight: { ...baseSpec.correctness_preflight, same_output_tolerance: { atol: 1e-4, rtol: 0 } } };
    const err = await (await run('spec-tolerance', noisyLogprobs(real, 1e-3, 3), spec)).result.catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/tolerance atol 0\.0001 \(correctness_preflight\.same_output_tolerance\)$/);
  });
});
