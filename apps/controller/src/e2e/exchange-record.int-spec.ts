// The exchange record of a real run: rx run on the real Redis and the four pipeline services as child processes,
// the hash-chain test policy (reduced by an override: 2 steps, 16 eval items). rx run ends by exporting
// exchange/record.json and checking it; every validator passes on it. Then, on copies of the run directory, one
// piece of evidence is removed or altered at a time (an item dropped from the treatment's predictions file, the observations
// edited, an arm's restore evidence deleted, the recovery reserve zeroed, a pinned source file edited) and
// `rx check-record` (the CLI, a child process) names the validator that fails, with exit code 3.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ExchangeRecord } from '@rx/exchange-record';
import { arithmeticProblems } from '@rx/pipeline/testing';
import { createRedisHarness } from '@rx/queue/testing';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { parseControllerConfig } from '../config';
import type { ExperimentData } from '../experiment/experiment-data';
import { runExperiment } from '../experiment/run-experiment';
import { freePort, ServiceSupervisor } from '@rx/local-stack';
import { REPO_ROOT } from '../infra/repo-root';
import { NullProgress } from '../progress/progress.reporter';
import { sha256Json } from '@rx/run-dir';
import { cli } from './run-directory.check';
import { checkRunRecord, EXCHANGE_RECORD } from '@rx/run-tools';
import { hashChainEntry } from '@rx/local-stack/testing';

jest.setTimeout(180_000);

const harness = createRedisHarness('exchange-record');
const work = mkdtempSync(path.join(tmpdir(), 'rx-exchange-'));
const supervisors: ServiceSupervisor[] = [];
const STEPS = 2;
const N_EVAL = 16;
const problems = arithmeticProblems(STEPS * 64 + N_EVAL).map((p) => ({ id: p.promptId, question: p.question, answer: p.answer }));
const data: ExperimentData = {
  train: problems.slice(0, STEPS * 64),
  test: problems.slice(STEPS * 64),
  dev: [],
  source: 'arithmeticProblems test fixture',
  trainManifestSha256: sha256Json(problems.slice(0, STEPS * 64)),
  testManifestSha256: sha256Json(problems.slice(STEPS * 64)),
};
const out = path.join(work, 'run');
/** the optimizer lr of specs/embedded.json (revision 1: 5e-4), which the backend must have been given */
const SPEC_LR = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'specs', 'embedded.json'), 'utf8')) as { optimizer: { lr: number } }).optimizer.lr;
const progress = new NullProgress();

beforeAll(async () => {
  const env = { REDIS_URL: harness.url, RX_BACKEND_URL: 'memory://hash-chain', RX_QUEUE_PREFIX: harness.prefix, RX_DATA_DIR: path.join(work, 'services'), RX_ALLOW_INSECURE_REDIS: '1' };
  for (const name of ['sampler', 'grader', 'advantage', 'trainer']) {
    const s = new ServiceSupervisor({ logsDir: path.join(work, 'logs') });
    supervisors.push(s);
    await s.start([{ name, port: await freePort(), env, entry: hashChainEntry(name) }]);
  }
  const override = path.join(work, 'override.json');
  writeFileSync(override, JSON.stringify({ steps: STEPS, dataset: { n_examples: STEPS * 64 }, eval: { n_examples: N_EVAL }, feasibility: { effective_config: { steps: STEPS, n_eval: N_EVAL } } }));
  const outcome = await runExperiment({
    specPath: path.join(REPO_ROOT, 'specs', 'embedded.json'),
    outDir: out,
    overridePath: override,
    services: 'external',
    backendFor: () => new HashChainPolicyBackend(),
    config: parseControllerConfig({ REDIS_URL: harness.url, RX_BACKEND_URL: 'memory://hash-chain', RX_QUEUE_PREFIX: harness.prefix, RX_CONCURRENCY: '16' }),
    progress,
    signal: new AbortController().signal,
    httpPort: null,
    data,
    stepStallTimeoutMs: 30_000,
  });
  expect([outcome.status, outcome.message]).toEqual(['complete', null]);
});

afterAll(async () => {
  await Promise.all(supervisors.map((s) => s.stop()));
  await harness.close();
  rmSync(work, { recursive: true, force: true });
});

/** a copy of the run directory with one change */
function altered(name: string, change: (dir: string, record: ExchangeRecord) => void): string {
  const dir = path.join(work, name);
  cpSync(out, dir, { recursive: true });
  change(dir, JSON.parse(readFileSync(path.join(dir, EXCHANGE_RECORD), 'utf8')) as ExchangeRecord);
  return dir;
}

const failing = (dir: string) => {
  const r = cli(['check-record', dir]);
  return { status: r.status, failed: r.stdout.split('\n').filter((l) => / FAIL /.test(l)).map((l) => l.split(/\s+/)[0]), stdout: r.stdout };
};

describe('the exchange record of a run', () => {
  it('is written at the end of rx run, and every validator passes on it', () => {
    expect(progress.lines.filter((l) => l.startsWith('exchange record: ')).map((l) => l.split(/\s+/).slice(2, 4).join(' '))).toEqual([
      'evaluator_validation pass',
      'decision_validation pass',
      'restoration_validation pass',
      'feasibility pass',
      'correctness_validation pass',
    ]);
    const r = cli(['check-record', out]);
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout.split('\n').filter((l) => l.trim() !== '')).toHaveLength(5);
    const record = checkRunRecord(out);
    expect(record.check.ok && record.check.pass).toBe(true);
    const status = cli(['status', out]);
    expect(status.stdout).toMatch(/exchange record \(rx check-record\):\n {2}evaluator_validation +pass/);
  });

  it('records per arm the shared init loaded, its adapter hash and the optimizer, before the first update', () => {
    const r = JSON.parse(readFileSync(path.join(out, EXCHANGE_RECORD), 'utf8')) as ExchangeRecord;
    const arms = Object.values(r.initialization_provenance.arms);
    expect(arms).toHaveLength(2);
    for (const a of arms) {
      expect(a.initialization.loaded_checkpoint_uri).toBe(r.checkpoints.find((c) => c.arm === 'shared_init')?.uri);
      expect(a.initialization.adapter_sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(a.initialization.before_first_update).toBe(true);
      expect(a.optimizer_checks[0].actual_config).toMatchObject({ lr: SPEC_LR, beta1: 0.9, beta2: 0.95, eps: 1e-8, optimizer_step_after_first_update: 1 });
    }
    expect(r.feasibility.recovery?.seconds).toBeGreaterThan(0);
  });

  it('fails the validator whose evidence is removed or altered', () => {
    const dropItem = altered('drop-item', (dir) => {
      const f = path.join(dir, 'gs1_kernel', 'eval.jsonl');
      writeFileSync(f, readFileSync(f, 'utf8').split('\n').slice(1).join('\n'));
    });
    const editObservations = altered('edit-observations', (dir) => {
      const f = path.join(dir, 'exchange', 'scored-observations.jsonl');
      writeFileSync(f, readFileSync(f, 'utf8').replace(/"treatment":(\d)/, (_, x) => `"treatment":${1 - Number(x)}`));
    });
    const noRestore = altered('no-restore', (dir, record) => {
      delete record.initialization_provenance.arms.grpo_gs8;
      writeFileSync(path.join(dir, EXCHANGE_RECORD), JSON.stringify(record));
    });
    const noRecovery = altered('no-recovery', (dir, record) => {
      record.feasibility.recovery = null;
      writeFileSync(path.join(dir, EXCHANGE_RECORD), JSON.stringify(record));
    });
    const editedSource = altered('edited-source', (dir) => {
      const f = path.join(dir, 'exchange', 'files', 'libs', 'preflight', 'src', 'importance-sampling.reference.ts');
      writeFileSync(f, `${readFileSync(f, 'utf8')}// edited\n`);
    });
    // the treatment's predictions are also the decision's: its observations no longer pair with them
    expect(failing(dropItem)).toMatchObject({ status: 3, failed: ['evaluator_validation', 'decision_validation'] });
    expect(failing(editObservations)).toMatchObject({ status: 3, failed: ['decision_validation'] });
    expect(failing(noRestore)).toMatchObject({ status: 3, failed: ['restoration_validation'] });
    expect(failing(noRecovery)).toMatchObject({ status: 3, failed: ['feasibility'] });
    expect(failing(editedSource)).toMatchObject({ status: 3, failed: ['correctness_validation'] });
  });

  it('exits 2 with one line for a directory without a run or without an exported record', () => {
    const r = cli(['check-record', work]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli(['export', work]).status).toBe(2);
  });
});
