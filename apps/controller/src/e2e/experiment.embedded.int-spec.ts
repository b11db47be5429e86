// THE LONGEST TEST (about a minute on 2 cores): `rx run` itself, as `npm start` runs it, on a reduced embedded
// experiment: the CLI starts the controller, which starts the policy server (the embedded transformer), the four
// services and uses the real Redis. Reduced by a spec override to 1 training step per arm and 16 eval items; the
// pilot and the gates are as the spec says. Every file of the run directory is checked against the others, and
// every service's /metrics, scraped over HTTP while the run goes on, against the run's record.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { StepRecord } from '@rx/contracts';
import { arithDataset } from '@rx/datasets';
import { parseExposition, type ParsedFamily } from '@rx/metrics/testing';
import { baselineArm, treatmentArm } from '@rx/spec';
import { childExit } from '@rx/local-stack/testing';
import { REPO_ROOT } from '../infra/repo-root';
import { checkCompletedRun, jsonLines } from './run-directory.check';
import type { PilotResult } from '@rx/run-dir';

jest.setTimeout(300_000);
/** the run's own deadline, under jest's: a run that hangs is stopped and reported with where it was */
const RUN_DEADLINE_MS = 270_000;

const CHECKPOINT = path.join(REPO_ROOT, 'models', 'char-lm');
const haveModel = existsSync(CHECKPOINT);
if (!haveModel) console.warn(`controller e2e: the embedded checkpoint ${CHECKPOINT} is not in the tree; the embedded rx run test is SKIPPED`);

const SERVICES = ['controller', 'policy-server', 'sampler', 'grader', 'advantage', 'trainer'] as const;
type Service = (typeof SERVICES)[number];

interface Scrapes {
  /** the last exposition of each service, parsed */
  last: Partial<Record<Service, Map<string, ParsedFamily>>>;
  /** what the policy server's /metrics answered without its key */
  policyServerWithoutKey?: number;
  /** the controller's last exposition that had gate values in it */
  controllerWithGates?: Map<string, ParsedFamily>;
  count: number;
}

/** runs `rx run` in a child process and scrapes every endpoint of logs/endpoints.json until it exits */
/** the policy server's key (rx run takes it from the environment): its /metrics answers only with it */
const POLICY_KEY = `e2e-${process.pid}-policy-key`;

async function runWhileScraping(args: string[], out: string): Promise<{ status: number | null; output: string; scrapes: Scrapes }> {
  const env = { ...process.env, RX_POLICY_API_KEY: POLICY_KEY };
  const child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = childExit(child).then(({ code }) => code);
  let done = false;
  void exited.then(() => (done = true));
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    child.kill('SIGINT'); // rx run stops its services on SIGINT; SIGKILL if it does not within 10 s
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  }, RUN_DEADLINE_MS);
  const scrapes: Scrapes = { last: {}, count: 0 };
  const endpointsFile = path.join(out, 'logs', 'endpoints.json');
  while (!done) {
    await new Promise((r) => setTimeout(r, 300));
    if (!existsSync(endpointsFile)) continue;
    const { endpoints } = JSON.parse(readFileSync(endpointsFile, 'utf8')) as { endpoints: Partial<Record<Service, string>> };
    await Promise.all(
      SERVICES.map(async (name) => {
        const url = endpoints[name];
        if (!url) return;
        try {
          const headers = name === 'policy-server' ? { authorization: `Bearer ${POLICY_KEY}` } : undefined;
          if (name === 'policy-server') scrapes.policyServerWithoutKey = (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) })).status;
          const res = await fetch(`${url}/metrics`, { headers, signal: AbortSignal.timeout(2000) });
          if (res.status !== 200) return;
          expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
          const parsed = parseExposition(await res.text());
          scrapes.last[name] = parsed;
          scrapes.count++;
          if (name === 'controller' && parsed.has('rx_gate_value') && parsed.get('rx_gate_value')!.metrics.length > 0) scrapes.controllerWithGates = parsed;
        } catch {
          // the stack is starting or stopping
        }
      }),
    );
  }
  const status = await exited;
  clearTimeout(deadline);
  if (timedOut) throw new Error(`rx run did not end within ${RUN_DEADLINE_MS / 1000} s; its output:\n${output.slice(-4000)}\n${logTails(path.join(out, 'logs'))}`);
  return { status, output, scrapes };
}

/** the last lines of each log file of the run (what each service was doing) */
function logTails(dir: string): string {
  if (!existsSync(dir)) return `(no ${dir})`;
  return readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .map((f) => `--- ${f}\n${readFileSync(path.join(dir, f), 'utf8').split('\n').slice(-15).join('\n')}`)
    .join('\n');
}

function samples(families: Map<string, ParsedFamily>, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const f = families.get(name);
  if (!f) throw new Error(`no ${name} in the exposition (have ${[...families.keys()].filter((k) => k.startsWith('rx_')).join(', ')})`);
  return f.metrics.map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) }));
}

(haveModel ? describe : describe.skip)('rx run on the embedded model (policy server and services spawned)', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-ctl-embedded-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('runs a reduced experiment end to end; the run directory and every service\'s metrics agree with the record', async () => {
    const steps = 1;
    const nEval = 16;
    const override = path.join(work, 'override.json');
    writeFileSync(override, JSON.stringify({ steps, dataset: { n_examples: 128 }, eval: { n_examples: nEval }, feasibility: { effective_config: { steps, n_eval: nEval } } }));
    const out = path.join(work, 'run');
    const r = await runWhileScraping(['run', '--spec', 'specs/embedded.json', '--override', override, '--out', out, '--port', '0'], out);
    if (r.status !== 0) throw new Error(`rx run exited ${r.status}\n${r.output.slice(-6000)}`);
    expect(r.output).toMatch(/verdict: (supported|inconclusive|refuted)/);
    // rx run ends with the exchange record exported and checked: every one of the five validators passes
    expect(r.output.match(/exchange record: [a-z_]+ +pass /g)).toHaveLength(5);
    const { record, spec } = checkCompletedRun(out, arithDataset({ split: 'test', seed: 0 }).slice(0, nEval).map((p) => p.id));
    expect(record.backend).toBe('embedded');
    // the correctness preflight ran through the Tinker client against the policy server (embedded model): the
    // trainer's float32 loss against the float64 recomputation is a real, non-zero difference within tolerance
    const pf = record.correctness_preflight!;
    expect(pf.backend).toBe('tinker');
    for (const id of ['backend_loss', 'baseline_loss', 'reference_loss', 'baseline_gradient'] as const) {
      const c = pf.checks.find((x) => x.id === id)!;
      expect([id, c.pass, c.errors.max_abs_error! > 0]).toEqual([id, true, true]);
    }
    expect(record.feasibility.gpu_hours.projected).toBe(0);

    // the spec's recorded revision: printed at the start, carried by the record as specs/embedded.json has it
    const revision = JSON.parse(readFileSync(path.join(REPO_ROOT, 'specs', 'embedded.json'), 'utf8')).revision;
    expect(record.revision).toEqual(revision);
    expect(r.output).toContain(`spec revision ${revision.number} of ${revision.revises}`);
    expect(r.output).toContain(`evidence ${revision.evidence.file} (sha256 ${revision.evidence.sha256.slice(0, 12)})`);

    // each arm scored on the fixed dev sample before its first update and at its final weights (1 step here)
    for (const arm of spec.arms) {
      const training = JSON.parse(readFileSync(path.join(out, arm.name, 'training.json'), 'utf8')) as { dev_accuracy: Array<{ updates: number; n: number; accuracy: number }> };
      expect(training.dev_accuracy.map((p) => [p.updates, p.n])).toEqual([[0, 128], [steps, 128]]);
      for (const p of training.dev_accuracy) expect(p.accuracy).toBeGreaterThanOrEqual(0);
    }

    // every service answered /metrics with a parseable exposition, its own service label and the Node metrics
    const { scrapes } = r;
    expect(Object.keys(scrapes.last).sort()).toEqual([...SERVICES].sort());
    expect(scrapes.policyServerWithoutKey).toBe(401);
    for (const name of SERVICES) {
      const fam = scrapes.last[name]!;
      expect([name, fam.has('process_cpu_seconds_total'), fam.has('nodejs_heap_size_used_bytes')]).toEqual([name, true, true]);
      for (const [metric, f] of fam) for (const m of f.metrics) if (m.labels) expect([name, metric, m.labels.service]).toEqual([name, metric, name]);
    }

    // the gate series of the controller carry the values and verdicts of the record's chosen pilot
    const pilot = record.gates as PilotResult;
    const chosen = pilot.pilots[pilot.pilots.length - 1];
    const t = treatmentArm(spec).name;
    const b = baselineArm(spec).name;
    expect(scrapes.controllerWithGates).toBeDefined();
    const gates = scrapes.controllerWithGates!;
    const value = samples(gates, 'rx_gate_value');
    const pass = samples(gates, 'rx_gate_pass');
    const bound = samples(gates, 'rx_gate_bound');
    expect(value).toHaveLength(chosen.report.results.length);
    for (const g of chosen.report.results) {
      const labels = { run: record.run_id, arm: t, gate: g.metric, service: 'controller' };
      const v = g.value === null ? NaN : Array.isArray(g.value) ? (g.value.length === 1 ? g.value[0] : NaN) : g.value;
      expect([g.metric, value.find((s) => JSON.stringify(s.labels) === JSON.stringify(labels))?.value]).toEqual([g.metric, v]);
      expect([g.metric, pass.find((s) => JSON.stringify(s.labels) === JSON.stringify(labels))?.value]).toEqual([g.metric, g.pass ? 1 : 0]);
      for (const side of ['min', 'max'] as const) {
        const scraped = bound.find((s) => s.labels.gate === g.metric && s.labels.side === side)?.value;
        expect([g.metric, side, scraped]).toEqual([g.metric, side, g.bound[side]]);
      }
    }

    // the workers' per-step series are values of the step logs, for both arms
    const stepLogs = (arm: string): StepRecord[] => [
      ...pilot.pilots.flatMap((p) => (existsSync(path.join(out, p.dir, arm, 'steps.jsonl')) ? jsonLines<StepRecord>(path.join(out, p.dir, arm, 'steps.jsonl')) : [])),
      ...jsonLines<StepRecord>(path.join(out, arm, 'steps.jsonl')),
    ];
    for (const arm of [t, b]) {
      const logged = stepLogs(arm);
      expect(logged.length).toBeGreaterThan(0);
      // the step gauges are set once, by the controller, from the records it logs; no pipeline service sets them
      const reward = samples(scrapes.last.controller!, 'rx_step_reward_mean').find((s) => s.labels.arm === arm)?.value;
      expect([arm, logged.some((s) => s.gate.rewardMean === reward)]).toEqual([arm, true]);
      const nonzero = samples(scrapes.last.controller!, 'rx_step_nonzero_advantage_ratio').find((s) => s.labels.arm === arm)?.value;
      expect([arm, logged.some((s) => s.gate.fracNonzeroAdvantage === nonzero)]).toEqual([arm, true]);
      for (const service of ['sampler', 'grader', 'advantage', 'trainer'] as const) {
        for (const gauge of ['rx_step_reward_mean', 'rx_step_index', 'rx_step_loss', 'rx_step_reward_std']) expect([service, gauge, samples(scrapes.last[service]!, gauge)]).toEqual([service, gauge, []]);
      }
      // the batch-signal gauges of the controller are values of the arm's metrics.jsonl lines
      const metricLines = [
        ...pilot.pilots.flatMap((p) => (existsSync(path.join(out, p.dir, arm, 'metrics.jsonl')) ? jsonLines<Record<string, number>>(path.join(out, p.dir, arm, 'metrics.jsonl')) : [])),
        ...jsonLines<Record<string, number>>(path.join(out, arm, 'metrics.jsonl')),
      ];
      const service = 'controller';
      for (const [gauge, key] of [['rx_step_reward_zero_std_ratio', 'rx/frac_reward_zero_std'], ['rx_step_clipped_completions_ratio', 'rx/completions/clipped_ratio'], ['rx_step_reward_std', 'rx/reward/std']] as const) {
        const v = samples(scrapes.last[service]!, gauge).find((s) => s.labels.arm === arm)?.value;
        expect([service, arm, gauge, v !== undefined && metricLines.some((l) => l[key] === v)]).toEqual([service, arm, gauge, true]);
      }
      const max = samples(scrapes.last[service]!, 'rx_step_completion_length_tokens').find((s) => s.labels.arm === arm && s.labels.stat === 'max')?.value;
      expect([service, arm, metricLines.some((l) => l['rx/completions/max_length'] === max)]).toEqual([service, arm, true]);
      for (const [service, stage] of [['sampler', 'sample'], ['grader', 'grade'], ['advantage', 'advantage'], ['trainer', 'train']] as const) {
        const n = samples(scrapes.last[service]!, 'rx_rollouts_processed_total').find((s) => s.labels.arm === arm && s.labels.stage === stage)?.value ?? 0;
        expect([service, arm, n > 0]).toEqual([service, arm, true]);
      }
    }
    // every attempt of every job is counted by its queue and outcome: each service sent on at least one job of each
    // queue it consumes, the controller took events (delivered); a clean run dead-letters nothing
    for (const [service, queues, outcome] of [['trainer', ['step-requests', 'train-steps'], 'sent'], ['sampler', ['sample-requests'], 'sent'], ['grader', ['rollouts'], 'sent'], ['advantage', ['graded-rollouts'], 'sent'], ['controller', ['step-events'], 'delivered']] as const) {
      const attempts = samples(scrapes.last[service]!, 'rx_job_attempts_total');
      for (const queue of queues) expect([service, queue, outcome, (attempts.find((s) => s.labels.queue === queue && s.labels.outcome === outcome)?.value ?? 0) > 0]).toEqual([service, queue, outcome, true]);
      expect([service, attempts.filter((s) => s.labels.outcome === 'dead_lettered')]).toEqual([service, []]);
    }
  });
});
