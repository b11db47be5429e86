// The controller's shared initialisation when the service loses every session in the middle of it (a hosted
// service's expired session): the Tinker client meets the loss as a 404 on a call naming the session or a model of
// it, the phase starts again on a new session (runOnLiveSession), and completes with the arms' same-output evidence.
// Real parts: a policy server started apart in hosted-like mode (lose_sessions_at_request), the Tinker client over
// HTTP, the embedded model, a real run directory.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { rendererFor, TinkerBackend, TinkerSessionLostError } from '@rx/backend';
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
});
