// The controller's shared initialisation when the service loses every session in the middle of it (a hosted
// service's expired session): the Tinker client meets the loss as a 404 on a call naming the session or a model of
// it, the phase starts again on a new session (runOnLiveSession), and completes with the arms' same-output evidence.
// Real parts: a policy server started apart in hosted-like mode (lose_sessions_at_request), the Tinker client over
// HTTP, the embedded model, a real run directory.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { rendererFor, TinkerBackend, TinkerSessionLostError, TinkerStuckError, type LoraConfig, type PolicyBackend, type TrainingClient } from '@rx/backend';
import { RunDir, sharedInitSchema } from '@rx/run-dir';
import { loadSpecText, type ExperimentSpec } from '@rx/spec';
import { startPolicyServerProcess, type PolicyServerProcess } from '../e2e/policy-server.process';
import { loadExperimentData, type ExperimentData } from '../experiment/experiment-data';
import { runOnLiveSession } from '../experiment/run-experiment';
import { REPO_ROOT } from '../infra/repo-root';
import type { ProgressReporter } from '../progress/progress.reporter';
import { runSharedInit } from './shared-init.phase';

jest.setTimeout(240_000);

const parsed = loadSpecText(readFileSync(path.join(REPO_ROOT, 'specs', 'embedded.json'), 'utf8'));
if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
const spec: ExperimentSpec = parsed.spec;
const KEY = `tml-session-loss-${process.pid}`;

describe('shared initialisation through a lost session', () => {
  let root: string;
  let data: ExperimentData;
  const servers: PolicyServerProcess[] = [];
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'rx-si-lost-'));
    data = await loadExperimentData(spec, { repoRoot: REPO_ROOT });
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
    rmSync(root, { recursive: true, force: true });
  });

  async function sharedInitLosingAt(request: number, restart: boolean) {
    const server = await startPolicyServerProcess({ apiKey: KEY, dataDir: path.join(root, `ps-${request}`), logFile: path.join(root, `ps-${request}.log`), hostedLike: { faults: { lose_sessions_at_request: request } } });
    servers.push(server);
    const backend = new TinkerBackend({ baseUrl: server.url, apiKey: KEY, logger: { warn: (m) => lines.push(`backend: ${m}`) } });
    const lines: string[] = [];
    const progress: ProgressReporter = { info: (l) => lines.push(l), warn: (l) => lines.push(l), arm: () => undefined, close: () => undefined };
    const dir = new RunDir(path.join(root, `run-${request}`));
    const ctx = { spec, backend, renderer: await rendererFor(spec.base_model), data, dir, progress, manifest: { runId: `si-lost-${request}` } };
    try {
      const phase = () => runSharedInit(ctx).then(() => undefined);
      const result = await (restart ? runOnLiveSession('shared_init', phase, progress) : phase()).then(
        () => null,
        (e: unknown) => e,
      );
      return { error: result, lines, dir, log: server.output() };
    } finally {
      await backend.close();
    }
  }

  it('starts the phase again on a new session and completes, the same-output evidence written', async () => {
    // request 13 (save_weights of the first arm's restored state) falls after that arm's model is created: a client the phase holds is lost with the session
    const { error, lines, dir, log } = await sharedInitLosingAt(13, true);
    expect(log).toMatch(/hosted-like: lost every session \(1\) at request 13/);
    expect(error).toBeNull();
    expect(lines.filter((l) => /^the service lost the controller's session during shared_init \(.*\): shared_init starts again on a new session \(1 of at most 3\)$/.test(l))).toHaveLength(1);
    const written = sharedInitSchema.parse(dir.readJson(dir.path('shared-init.json')));
    expect(written.same_output!.pass).toBe(true);
    expect(Object.keys(written.arms).sort()).toEqual(spec.arms.map((a) => a.name).sort());
  });

  it('(control) without the restart the same loss fails the phase with the lost session', async () => {
    const { error, log } = await sharedInitLosingAt(13, false);
    expect(log).toMatch(/hosted-like: lost every session \(1\) at request 13/);
    expect(error).toBeInstanceOf(TinkerSessionLostError);
  });

  describe('unload_model of the models it no longer needs', () => {
    // a server that holds 2 models at once: the shared init (its own model, then one per arm, each loaded from the
    // state) fits only if each model is unloaded once its work is done
    async function sharedInitOnTwoModels(name: string, withUnload: boolean) {
      const server = await startPolicyServerProcess({ apiKey: KEY, dataDir: path.join(root, `ps-${name}`), logFile: path.join(root, `ps-${name}.log`), env: { RX_POLICY_MAX_MODELS: '2' } });
      servers.push(server);
      const tinker = new TinkerBackend({ baseUrl: server.url, apiKey: KEY, retries: 0, timing: { stuckTimeoutMs: 3000 }, logger: { warn: () => undefined } });
      // the control: the same backend, its training clients without unload
      const backend: PolicyBackend = withUnload
        ? tinker
        : Object.assign(Object.create(tinker) as TinkerBackend, {
            createLoraTrainingClient: async (c: LoraConfig): Promise<TrainingClient> => {
              const t = await tinker.createLoraTrainingClient(c);
              return {
                modelId: t.modelId,
                seedRefused: t.seedRefused,
                forwardBackward: (d, l) => t.forwardBackward(d, l),
                optimStep: (p) => t.optimStep(p),
                saveWeightsForSampler: (n, o) => t.saveWeightsForSampler(n, o),
                saveState: (n, o) => t.saveState(n, o),
                loadState: (p) => t.loadState(p),
              };
            },
          });
      const lines: string[] = [];
      const progress: ProgressReporter = { info: (l) => lines.push(l), warn: (l) => lines.push(l), arm: () => undefined, close: () => undefined };
      const dir = new RunDir(path.join(root, `run-${name}`));
      try {
        const error = await runSharedInit({ spec, backend, renderer: await rendererFor(spec.base_model), data, dir, progress, manifest: { runId: `si-${name}` } }).then(
          () => null,
          (e: unknown) => e,
        );
        const metrics = await (await fetch(`${server.url}/metrics`, { headers: { 'X-API-Key': KEY } })).text();
        const unloads = Number(/rx_policy_server_requests_total\{endpoint="unload_model",status="200"[^}]*\} (\d+)/.exec(metrics)?.[1] ?? 0);
        return { error, unloads, lines };
      } finally {
        await tinker.close();
      }
    }

    it('unloads the shared state\'s model and each arm\'s once their evidence is taken: the init fits in 2 live models', async () => {
      const { error, unloads, lines } = await sharedInitOnTwoModels('unload', true);
      expect(error).toBeNull();
      expect(unloads).toBe(1 + spec.arms.length);
      expect(lines.filter((l) => /unload_model .* failed/.test(l))).toEqual([]);
    });

    it('(control) without unload_model the third model is refused (HTTP 429 until the stuck timeout)', async () => {
      const { error, unloads } = await sharedInitOnTwoModels('no-unload', false);
      expect(unloads).toBe(0);
      expect(error).toBeInstanceOf(TinkerStuckError);
      expect((error as Error).message).toMatch(/create_model made no progress .*HTTP 429/);
    });
  });
});
