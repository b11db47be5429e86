// A chaos session: one stack (private Redis with a password, the policy server, the four services), a clean
// run, then `runs` runs with the faults of a seeded plan, each checked on its own and against the clean run;
// at the end every log and file written (and the Redis AOF) is grepped for the API key and the Redis password.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { ChaosStack } from './chaos-stack';
import { executeRun, type RunOutcome } from './chaos-run';
import { FAULT_TARGETS, planFaults, type FaultTarget, type RunPlan } from './fault-plan';
import { scanForSecrets } from './secret-scan';

export interface SessionOptions {
  seed: number;
  runs: number;
  steps: number;
  evalItems: number;
  extraPerRun: number;
  dir: string;
  model: 'hash-chain' | 'embedded';
  baseCheckpoint?: string;
  policyLatencyMs: number;
  arms: readonly string[];
  /** explicit plans (tests); default: planFaults over the seed */
  plans?: RunPlan[];
  runTimeoutMs?: number;
  log: (line: string) => void;
}

export interface SessionReport {
  seed: number;
  clean: RunOutcome;
  runs: RunOutcome[];
  /** targets of the plan that never landed during a run */
  uncovered: FaultTarget[];
  secrets: { files: number; bytes: number; hits: Array<{ file: string; label: string }> };
  /** the services' exit codes on SIGTERM at the end */
  shutdown: Record<string, number | null>;
  ok: boolean;
}

export async function runChaosSession(o: SessionOptions): Promise<SessionReport> {
  mkdirSync(o.dir, { recursive: true });
  const apiKey = `rx-fake-key-${randomBytes(12).toString('hex')}`;
  const redisPassword = `rx-fake-pw-${randomBytes(12).toString('hex')}`;
  const plans = o.plans ?? planFaults({ seed: o.seed, runs: o.runs, steps: o.steps, arms: o.arms, extraPerRun: o.extraPerRun });
  o.log(`chaos: seed ${o.seed}, ${plans.length} run(s) of ${o.steps} step(s), ${o.evalItems} eval items, model ${o.model}; work in ${o.dir}`);
  for (const p of plans) o.log(`  plan run ${p.run}: ${p.faults.map((f) => `${f.target}@${f.arm}/${f.step}:${f.stage}+${f.delayMs}ms`).join(', ')}`);
  const stack = await ChaosStack.start({ dir: o.dir, model: o.model, baseCheckpoint: o.baseCheckpoint, apiKey, redisPassword, policyLatencyMs: o.policyLatencyMs, prefix: `chaos-${o.seed}` });
  let shutdown: Record<string, number | null> = {};
  let clean: RunOutcome;
  const runs: RunOutcome[] = [];
  try {
    const common = { steps: o.steps, evalItems: o.evalItems, timeoutMs: o.runTimeoutMs, log: o.log };
    clean = await executeRun(stack, { ...common, runId: `c${o.seed}-r0`, outDir: path.join(o.dir, 'runs', 'r0'), faults: [] });
    o.log(`  run 0 (clean): ${clean.error ?? 'complete'} in ${clean.wallSeconds.toFixed(1)} s`);
    for (const plan of plans) {
      const out = await executeRun(stack, {
        ...common,
        runId: `c${o.seed}-r${plan.run}`,
        outDir: path.join(o.dir, 'runs', `r${plan.run}`),
        faults: plan.faults,
        clean: clean.result ?? undefined,
      });
      runs.push(out);
      o.log(`  run ${plan.run}: ${out.error ?? 'complete'} in ${out.wallSeconds.toFixed(1)} s; ${out.differences.length === 0 ? 'identical' : `${out.differences.length} difference(s)`}`);
    }
  } finally {
    shutdown = await stack.close();
  }
  const landed = new Set(runs.flatMap((r) => r.faults.filter((f) => f.landed !== 'not-injected').map((f) => f.fault.target)));
  const planned = new Set(plans.flatMap((p) => p.faults.map((f) => f.target)));
  const uncovered = FAULT_TARGETS.filter((t) => planned.has(t) && !landed.has(t));
  const secrets = scanForSecrets(o.dir, { 'the API key': apiKey, 'the Redis password': redisPassword });
  const ok =
    clean.error === null &&
    clean.problems.length === 0 &&
    runs.every((r) => r.error === null && r.problems.length === 0 && r.differences.length === 0 && r.faults.every((f) => f.recovered)) &&
    uncovered.length === 0 &&
    secrets.hits.length === 0;
  return { seed: o.seed, clean, runs, uncovered, secrets, shutdown, ok };
}

/** the table printed at the end of a session */
export function formatReport(r: SessionReport): string {
  const lines: string[] = [];
  const row = (cells: string[]) => lines.push(cells.map((c, i) => c.padEnd([4, 64, 10, 10, 8][i] ?? 0)).join(' ').trimEnd());
  row(['run', 'faults injected (target@arm/step stage: where it landed)', 'recovered', 'identical', 'wall']);
  row(['0', '(clean run: the reference)', '-', '-', `${r.clean.wallSeconds.toFixed(0)} s`]);
  for (const [i, run] of r.runs.entries()) {
    const faults = run.faults.map((f) => `${f.fault.target}@${f.fault.arm}/${f.step} ${f.fault.stage}: ${f.landed}`);
    const recovered = `${run.faults.filter((f) => f.recovered && f.landed !== 'not-injected').length}/${run.faults.filter((f) => f.landed !== 'not-injected').length}`;
    const identical = run.error ? 'no: failed' : run.differences.length === 0 && run.problems.length === 0 ? 'yes' : 'no';
    faults.forEach((f, k) => row(k === 0 ? [String(i + 1), f, recovered, identical, `${run.wallSeconds.toFixed(0)} s`] : ['', f]));
    if (faults.length === 0) row([String(i + 1), '(none)', recovered, identical, `${run.wallSeconds.toFixed(0)} s`]);
    if (run.error) lines.push(`     run ${i + 1} failed: ${run.error}`);
    for (const p of run.problems) lines.push(`     run ${i + 1}: ${p}`);
    for (const d of run.differences.slice(0, 5)) lines.push(`     run ${i + 1} differs: ${d}`);
  }
  const all = r.runs.flatMap((x) => x.faults.filter((f) => f.landed !== 'not-injected'));
  const byTarget = FAULT_TARGETS.map((t) => `${t} ${all.filter((f) => f.fault.target === t).length}`).join(', ');
  lines.push('');
  lines.push(`faults injected: ${all.length} (${byTarget}); mid-job ${all.filter((f) => f.landed === 'mid-job').length}, queued ${all.filter((f) => f.landed === 'queued').length}, mid-step ${all.filter((f) => f.landed === 'mid-step').length}, after the last step ${all.filter((f) => f.landed === 'late').length}`);
  lines.push(`recovered: ${all.filter((f) => f.recovered).length}/${all.length}`);
  lines.push(`runs identical to the clean run: ${r.runs.filter((x) => !x.error && x.differences.length === 0 && x.problems.length === 0).length}/${r.runs.length}`);
  if (r.clean.error || r.clean.problems.length > 0) lines.push(`the clean run failed: ${r.clean.error ?? r.clean.problems.join('; ')}`);
  if (r.uncovered.length > 0) lines.push(`never landed during a run: ${r.uncovered.join(', ')}`);
  lines.push(`secrets (API key, Redis password) in ${r.secrets.files} files (${(r.secrets.bytes / 1e6).toFixed(1)} MB) of logs, data and the Redis AOF: ${r.secrets.hits.length === 0 ? 'none' : r.secrets.hits.map((h) => `${h.label} in ${h.file}`).join(', ')}`);
  lines.push(`shutdown on SIGTERM: ${Object.entries(r.shutdown).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  lines.push(`seed ${r.seed}: ${r.ok ? 'PASS' : 'FAIL'}`);
  return lines.join('\n');
}
