// Adapter evidence over the wire (issue 29), with `rx run` as a user runs it on the reduced embedded experiment (the
// override of experiment.embedded.int-spec.ts: 1 training step per arm, 16 eval items):
//   1. a spawn-mode run (rx run starts its own policy server): the reference hashes;
//   2. `--backend tinker` against a policy server started apart, as docs/tinker.md says (its own data directory):
//      `rx check-record` passes all five validators, and the adapter hashes (the shared state's, each arm's restored
//      and each arm's final) are the spawn-mode run's, since both servers hold the same weights;
//   3. the same against a server in the hosted-like mode with both refusals of the published run's service (per-model
//      seed refused at create_model, no checkpoint archive route): a complete record that names both, rx check-record's
//      one restoration line saying what is needed, and rx run's exit 4 (its own record fails a validator).
// The seed refusal shares run 3 (not run 2): the refused seed leaves the server's default seed, so run 2 compares
// the path where the spec's seed is sent on both sides.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort, startNodeProcess, type NodeProcess } from '@rx/local-stack';
import { readRunFile, RunDir } from '@rx/run-dir';
import { REPO_ROOT } from '../infra/repo-root';
import { runRx, type RxExit } from './rx-cli.e2e-helper';

/** three embedded runs in a row: about a minute each on an idle 2-core machine, several when it is loaded */
jest.setTimeout(45 * 60_000);
/** each run's own deadline: a run that hangs is stopped and reported with where it was */
const RUN_DEADLINE_MS = 12 * 60_000;

const CHECKPOINT = path.join(REPO_ROOT, 'models', 'char-lm');
const haveModel = existsSync(CHECKPOINT);
if (!haveModel) console.warn(`adapter evidence e2e: the embedded checkpoint ${CHECKPOINT} is not in the tree; SKIPPED`);

const KEY = `tml-adapter-e2e-${process.pid}`;
const ARMS = ['grpo_gs8', 'gs1_kernel'] as const;
const VALIDATORS = ['restoration_validation', 'correctness_validation', 'evaluator_validation', 'feasibility', 'decision_validation'];

type Exit = RxExit;

/** `rx <args>` as a user types it, stopped with SIGINT past its deadline */
const rx = (args: string[], env: Record<string, string | undefined> = {}): Promise<Exit> => runRx(args, { deadlineMs: RUN_DEADLINE_MS, env });

/** the policy server as docs/tinker.md starts it apart: HOST=127.0.0.1 PORT=… RX_POLICY_API_KEY=… node -r ./tools/register.js apps/policy-server/src/main.ts */
async function startSeparateServer(dataDir: string, hostedLike?: Record<string, unknown>): Promise<{ server: NodeProcess; url: string }> {
  const port = await freePort();
  const env: Record<string, string> = { HOST: '127.0.0.1', PORT: String(port), RX_POLICY_API_KEY: KEY, RX_DATA_DIR: dataDir };
  if (hostedLike) env.RX_POLICY_HOSTED_LIKE = JSON.stringify(hostedLike);
  const server = await startNodeProcess({ name: 'policy-server', entry: 'apps/policy-server/src/main.ts', env, waitReady: false });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (!server.running()) throw new Error(`the separate policy server exited before it answered:\n${server.output()}`);
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
    if (ok) return { server, url };
    if (Date.now() > deadline) throw new Error(`the separate policy server did not answer /health within 120 s:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** the adapter hashes a run recorded: the shared state's, each arm's right after its restore, each arm's final */
function adapterHashes(out: string): Record<string, string | null> {
  const dir = new RunDir(out);
  const init = readRunFile(dir, 'shared-init.json');
  const hashes: Record<string, string | null> = { shared_init: init.adapter.sha256 };
  for (const arm of ARMS) {
    hashes[`${arm} restored`] = init.arms[arm].restore.adapter.sha256;
    hashes[`${arm} final`] = readRunFile(dir, '<arm>/training.json', dir.trainingFile(arm)).final?.adapter?.sha256 ?? null;
  }
  return hashes;
}

function validatorLines(output: string): string[] {
  return output.split('\n').filter((l) => VALIDATORS.some((v) => l.startsWith(`${v} `)));
}

(haveModel ? describe : describe.skip)('adapter evidence over the wire (rx run, reduced embedded experiment)', () => {
  let work: string;
  let override: string;
  let spawned: string;
  const servers: NodeProcess[] = [];
  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'rx-adapter-e2e-'));
    override = path.join(work, 'override.json');
    const steps = 1;
    const nEval = 16;
    writeFileSync(override, JSON.stringify({ steps, dataset: { n_examples: 128 }, eval: { n_examples: nEval }, feasibility: { effective_config: { steps, n_eval: nEval } } }));
    spawned = path.join(work, 'spawned');
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(work, { recursive: true, force: true });
  });

  const runArgs = (out: string, extra: string[] = []) => ['run', '--spec', 'specs/embedded.json', '--override', override, '--out', out, '--port', 'off', ...extra];

  it('a run against a policy server started apart passes every validator with the adapter hashes of a spawn-mode run', async () => {
    const reference = await rx(runArgs(spawned), { TINKER_BASE_URL: undefined, RX_POLICY_HOSTED_LIKE: undefined });
    if (reference.status !== 0) throw new Error(`the spawn-mode rx run exited ${reference.status}\n${reference.output.slice(-6000)}`);
    expect(readRunFile(new RunDir(spawned), 'record.json').backend).toBe('embedded');

    const data = path.join(work, 'separate-server-data');
    const { server, url } = await startSeparateServer(data);
    servers.push(server);
    const out = path.join(work, 'separate');
    const r = await rx(runArgs(out, ['--backend', 'tinker']), { TINKER_BASE_URL: url, TINKER_API_KEY: KEY, RX_POLICY_HOSTED_LIKE: undefined });
    if (r.status !== 0) throw new Error(`rx run --backend tinker exited ${r.status}\n${r.output.slice(-6000)}\n--- separate server:\n${server.output()}`);
    expect(readRunFile(new RunDir(out), 'record.json').backend).toBe('tinker');
    expect(r.output).toContain(`backend tinker at ${url}`);
    // the weights lived in the separate server's data directory, not in the run's
    expect(readdirSync(data).length).toBeGreaterThan(0);

    const check = await rx(['check-record', out]);
    const lines = validatorLines(check.output);
    expect([check.status, lines.length]).toEqual([0, 5]);
    for (const l of lines) expect(l).toMatch(/^[a-z_]+ +pass +every check holds$/);

    const separate = adapterHashes(out);
    const reference_ = adapterHashes(spawned);
    for (const [what, h] of Object.entries(separate)) expect([what, h]).toEqual([what, expect.stringMatching(/^[0-9a-f]{64}$/)]);
    expect(separate).toEqual(reference_);
    // the hashes follow the weights: each arm restored the shared state, and its one update moved it
    for (const arm of ARMS) {
      expect(separate[`${arm} restored`]).toBe(separate.shared_init);
      expect(separate[`${arm} final`]).not.toBe(separate.shared_init);
    }
    expect(readRunFile(new RunDir(out), 'shared-init.json').adapter.source).toMatch(/^sha256 of adapter_model\.safetensors \(\d+ bytes\) in the checkpoint archive of /);
  });

  it('a service that refuses the per-model seed and has no archive route: a complete record that names both, check-record\'s one line, rx run exits 4', async () => {
    const { server, url } = await startSeparateServer(path.join(work, 'hosted-like-data'), { refuse_model_seed: true, no_archive_route: true });
    servers.push(server);
    const out = path.join(work, 'hosted-like');
    const r = await rx(runArgs(out, ['--backend', 'tinker']), { TINKER_BASE_URL: url, TINKER_API_KEY: KEY, RX_POLICY_HOSTED_LIKE: undefined });
    if (r.status !== 4) throw new Error(`rx run --backend tinker (hosted-like) exited ${r.status}, not 4\n${r.output.slice(-6000)}\n--- server:\n${server.output()}`);
    expect(r.output).toContain('exchange record: FAILS a validator (see above): rx run exits 4');

    // complete: every phase done, the record and the decision written
    const dir = new RunDir(out);
    expect(readRunFile(dir, 'state.json').status).toBe('complete');
    const record = readRunFile(dir, 'record.json');
    expect(record.verdict.outcome).toMatch(/^(supported|inconclusive|refuted)$/);

    // the seed refusal: the effective configuration and shared-init.json say so
    const init = readRunFile(dir, 'shared-init.json');
    expect(init.lora.seed_refused).toMatch(/per-model seeds are refused/);
    expect(readRunFile(dir, 'effective-config.json').lora_seed).toEqual({ requested: 0, sent: false, refusal: init.lora.seed_refused });
    // no bytes: no hash anywhere, each saying why
    for (const [what, h] of Object.entries(adapterHashes(out))) expect([what, h]).toEqual([what, null]);
    expect(init.adapter.unavailable).toMatch(/answered HTTP 404/);

    // rx check-record: restoration_validation fails on one line naming what it needs and both refusals; the others pass
    const check = await rx(['check-record', out]);
    expect(check.status).toBe(3);
    const lines = validatorLines(check.output);
    expect(lines).toHaveLength(5);
    const restoration = lines.find((l) => l.startsWith('restoration_validation '))!;
    const standIn = Object.values(init.arms)[0].output_sha256.slice(0, 12);
    const rank = readRunFile(dir, 'spec.json').lora_rank;
    const route = '/api/v1/training_runs/{model_id}/checkpoints/weights/{name}/archive';
    expect(restoration).toBe(
      `restoration_validation FAIL (unverified)  ${ARMS.join(', ')}: missing or duplicate arm evidence (no adapter_sha256: needs the sha256 of the adapter bytes each arm restored; ` +
        `the record says: per-model seed 0 refused by the service at create_model, so the shared state was created once without it; ` +
        `adapter bytes could not be hashed: GET ${route} answered HTTP 404: the service hands out no checkpoint archive (Cannot GET ${route}); ` +
        `stand-in: the same initial output ${standIn}… on 2 arms; weights_info: rx-embedded/char-lm, LoRA rank ${rank}).`,
    );
    for (const l of lines.filter((x) => x !== restoration)) expect(l).toMatch(/^[a-z_]+ +pass +every check holds$/);

    // the exchange record names both refusals, with the evidence that stands in
    const exchange = JSON.parse(readFileSync(path.join(out, 'exchange', 'record.json'), 'utf8')) as { initialization_provenance: { arms: Record<string, { initialization: { note?: string; stand_in_evidence?: { identical: boolean } } }> } };
    for (const arm of ARMS) {
      const i = exchange.initialization_provenance.arms[arm].initialization;
      expect(i.note).toMatch(/^per-model seed 0 refused .*; adapter bytes could not be hashed: /);
      expect(i.stand_in_evidence?.identical).toBe(true);
    }
  });
});
