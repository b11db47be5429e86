// The same correctness preflight through the Tinker client: the policy server (embedded model) as a real child
// process on loopback, the controller's TinkerBackend over HTTP. It passes with the server's float32 loss and
// logprobs against the float64 recomputation, and a client-side optimizer that steps twice fails it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { rendererFor, TinkerBackend, type PolicyBackend } from '@rx/backend';
import { loadSpecText } from '@rx/spec';
import { RunStopped } from '../../experiment/experiment-context';
import { loadExperimentData, type ExperimentData } from '../../experiment/experiment-data';
import { freePort, ServiceSupervisor } from '@rx/local-stack';
import { REPO_ROOT } from '../../infra/repo-root';
import type { ProgressReporter } from '../../progress/progress.reporter';
import { RunDir, type SharedInitResult } from '@rx/run-dir';
import { runSharedInit } from '../shared-init.phase';
import type { FixedBatches } from './fixed-batch';
import { optimizerSteppingTwice } from './testing/injected-bugs.fixture';
import { RX_LOOP } from './loop-under-test';
import { fixedBatchesOf, runPreflight, type PreflightContext } from './preflight.phase';

jest.setTimeout(300_000);

const parsed = loadSpecText(readFileSync(path.join(REPO_ROOT, 'specs', 'embedded.json'), 'utf8'));
if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
const spec = parsed.spec;
const API_KEY = 'rx-preflight-test-key';

describe('the correctness preflight over the Tinker client against the policy server', () => {
  let root: string;
  let supervisor: ServiceSupervisor;
  let tinker: TinkerBackend;
  let data: ExperimentData;
  let init: SharedInitResult;
  let fixed: FixedBatches;
  let serverUrl: string;
  const progress: ProgressReporter = { info: () => undefined, warn: () => undefined, arm: () => undefined, close: () => undefined };

  async function context(backend: PolicyBackend, name: string): Promise<PreflightContext> {
    return { spec, backend, renderer: await rendererFor(spec.base_model), data, dir: new RunDir(path.join(root, name)), progress, concurrency: 4, manifest: { runId: `pft-${name}` } };
  }

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'rx-preflight-tinker-'));
    supervisor = new ServiceSupervisor({ logsDir: path.join(root, 'logs') });
    const [server] = await supervisor.start([
      { name: 'policy-server', port: await freePort(), env: { HOST: '127.0.0.1', RX_DATA_DIR: path.join(root, 'policy-server'), RX_POLICY_API_KEY: API_KEY } },
    ]);
    serverUrl = server.url;
    tinker = new TinkerBackend({ baseUrl: server.url, apiKey: API_KEY });
    data = await loadExperimentData(spec, { repoRoot: REPO_ROOT });
    init = await runSharedInit(await context(tinker, 'init'));
    fixed = await fixedBatchesOf(await context(tinker, 'fixed'), init);
  });
  afterAll(async () => {
    await tinker?.close();
    await supervisor?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** the server's answered create_model and unload_model requests so far, from its /metrics */
  async function modelCalls(): Promise<{ created: number; unloaded: number }> {
    const text = await (await fetch(`${serverUrl}/metrics`, { headers: { 'X-API-Key': API_KEY } })).text();
    const count = (endpoint: string) => Number(new RegExp(`^rx_policy_server_requests_total\\{endpoint="${endpoint}",status="200"[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return { created: count('create_model'), unloaded: count('unload_model') };
  }

  it('passes, with the server trainer float32 loss against float64 as a real non-zero difference; every model it made is unloaded', async () => {
    const before = await modelCalls();
    const result = await runPreflight(await context(tinker, 'clean'), init, RX_LOOP, fixed);
    const after = await modelCalls();
    // the untouched-init copy, the correctness checks' fresh copies and one probe per arm: none left on the service
    expect(after.created - before.created).toBeGreaterThanOrEqual(3 + spec.arms.length);
    expect(after.unloaded - before.unloaded).toBe(after.created - before.created);
    expect([result.pass, result.failures]).toEqual([true, []]);
    expect(result.backend).toBe('tinker');
    expect(init.state_path).toMatch(/^tinker:\/\//);
    const backendLoss = result.checks.find((c) => c.id === 'backend_loss')!;
    expect(backendLoss.errors.max_abs_error).toBeGreaterThan(0);
    expect(result.paths[0].errors.baseline_loss.max_abs_error).toBeGreaterThan(0);
    expect(result.update_direction.delta_loss).toBeLessThan(0);
    expect(result.shared_init.untouched).toBe(true);
  });

  it('fails update_direction when the client applies every optim_step twice', async () => {
    const twice = optimizerSteppingTwice(tinker, { closesInner: false });
    const ctx = await context(twice, 'twice');
    await expect(runPreflight(ctx, init, RX_LOOP, fixed)).rejects.toThrow(RunStopped);
    const kept = JSON.parse(readFileSync(ctx.dir.preflightFile, 'utf8')) as { failed_checks: string[] };
    expect(kept.failed_checks).toContain('update_direction');
  });
});
