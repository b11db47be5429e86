// Reading a run directory (`rx run --out <dir>`) for the report: the one place that knows its layout.
// Each file is parsed with a zod schema of only the fields the report reads; every part but the marker file
// (run.json or record.json) is optional, and a part that is missing or malformed becomes a note in the report,
// never a failure. Gate reports and the decision are found by their shape wherever the controller nests them.
//
//   run.json                      the manifest (runId, createdAt, backend)        state.json   status and reason
//   spec.json | effective-config.json | record.json   arms (name, advantage), decision_rule, activation_gate, title
//   <arm>/steps.jsonl             one trainer StepRecord per completed step (gate.rewardMean, rollouts[].advantage, ...)
//   pilot_bw<h>[_FAILED_<gate>]/<arm>/steps.jsonl     the pilot's steps (a failed pilot's kept beside the calibration)
//   pilot.json, pilot_*/*.json, record.json           gate reports {pass, results: [{metric, value, bound, pass}]}
//   <model>/eval.jsonl            {"item_id", "correct"} per test item, for each arm and `base`
//   decision-summary.json | record.json               {n, effect, halfwidth, lower, upper, outcome, ...}, margin, alpha
//   record.json                   verdict (a string, or {outcome, reasoning})
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { parseItemLines, PairedItemsError, type ItemLine } from '@rx/stats';
import { canonicalJson, findAll, findFirst, formatPath, type Found } from './json-search';

export const TREATMENT_ADVANTAGE = 'kernel_cross_prompt_baseline';
export const BASELINE_ADVANTAGE = 'group_mean';
/** the model evaluated at the shared initial LoRA state */
export const BASE_MODEL_NAME = 'base';

/** The directory is missing or holds no run: the CLI prints the message as one line. */
export class RunDirError extends Error {
  override readonly name = 'RunDirError';
}

export type ArmRole = 'treatment' | 'baseline';

export interface ArmInfo {
  name: string;
  advantage: string | null;
  role: ArmRole | null;
}

export interface StepPoint {
  step: number;
  rewardMean: number | null;
  loss: number | null;
  fracNonzeroAdvantage: number | null;
  /** A_i of every rollout of the step */
  advantages: number[];
  /** n_eff,i of every rollout of the step */
  effectiveNeighbors: number[];
}

export interface StepSeries {
  arm: string;
  phase: 'training' | 'pilot';
  /** the file, relative to the run directory */
  source: string;
  /** `gs1_kernel` or `gs1_kernel (pilot_bw0.5)` */
  label: string;
  steps: StepPoint[];
}

export interface GateBound {
  one_of?: number[];
  min?: number;
  max?: number;
}

export interface GateValue {
  metric: string;
  measures: string;
  value: number | number[] | null;
  bound: GateBound;
  boundText: string;
  pass: boolean;
  detail: string | null;
}

export interface GateReportEntry {
  /** `pilot bw0.5 (failed)` */
  label: string;
  /** `pilot.json: attempts[0].gates` */
  source: string;
  pass: boolean;
  results: GateValue[];
}

export interface EvalItems {
  model: string;
  source: string;
  items: ItemLine[];
}

export interface DecisionNumbers {
  n: number;
  effect: number;
  halfwidth: number;
  lower: number;
  upper: number;
  outcome: string | null;
  supported: boolean | null;
  winsTreatment: number | null;
  winsBaseline: number | null;
  /** the claim holds when lower > margin */
  margin: number | null;
  alpha: number | null;
  source: string;
}

export interface Verdict {
  headline: string;
  reasoning: string[];
  source: string;
}

/** an arm's greedy accuracy on the run's fixed dev sample, after so many updates (<arm>/training.json dev_accuracy) */
export interface DevAccuracySeries {
  arm: string;
  points: Array<{ updates: number; accuracy: number; n: number }>;
}

export interface RunData {
  root: string;
  runId: string | null;
  title: string | null;
  createdAt: string | null;
  backend: string | null;
  status: { status: string; reason: string | null } | null;
  arms: ArmInfo[];
  treatment: string | null;
  baseline: string | null;
  steps: StepSeries[];
  devAccuracy: DevAccuracySeries[];
  gateReports: GateReportEntry[];
  evals: EvalItems[];
  decision: DecisionNumbers | null;
  verdict: Verdict | null;
  /** parts missing or unreadable, one line each */
  notes: string[];
}

// --- the schemas of the parts read -------------------------------------------------------------------------------
const num = z.number().finite();

const manifestSchema = z.object({ runId: z.string(), createdAt: z.string().optional(), backend: z.string().optional() });
const stateSchema = z.object({ runId: z.string().optional(), status: z.string(), reason: z.string().nullable().optional() });
const recordIdSchema = z.object({ runId: z.string().optional(), run_id: z.string().optional() });

const armSchema = z.object({ name: z.string().min(1), advantage: z.string().optional() });
const gateCheckSchema = z.object({
  metric: z.string(),
  measures: z.string().optional(),
  one_of: z.array(z.union([z.string(), z.number()])).optional(),
  min: num.optional(),
  max: num.optional(),
});
const specPartsSchema = z.object({
  title: z.string().optional(),
  arms: z.array(armSchema).min(1),
  decision_rule: z
    .object({ alpha: num.optional(), criteria: z.array(z.object({ id: z.string().optional(), margin: num.optional() })).optional() })
    .optional(),
  activation_gate: z.object({ checks: z.array(gateCheckSchema) }).optional(),
});
type SpecParts = z.infer<typeof specPartsSchema>;

const devAccuracySchema = z.object({
  dev_accuracy: z.array(z.object({ updates: z.number().int().nonnegative(), accuracy: num, n: z.number().int().positive() })).min(1),
});

export const stepLineSchema = z.object({
  step: z.number().int().nonnegative(),
  loss: num.optional(),
  gate: z
    .object({ rewardMean: num.optional(), fracNonzeroAdvantage: num.optional() })
    .optional(),
  rollouts: z.array(z.object({ reward: num.optional(), advantage: num.optional(), effectiveNeighbors: num.optional() })).optional(),
});

const gateBoundSchema = z.object({ one_of: z.array(z.coerce.number()).optional(), min: num.optional(), max: num.optional() });
export const gateReportSchema = z.object({
  pass: z.boolean(),
  results: z
    .array(
      z.object({
        metric: z.string(),
        measures: z.string().optional(),
        value: z.union([num, z.array(num), z.null()]),
        bound: gateBoundSchema.optional(),
        boundText: z.string().optional(),
        pass: z.boolean(),
        detail: z.string().optional(),
      }),
    )
    .min(1),
});

export const hoeffdingSchema = z.object({
  n: z.number().int().positive(),
  effect: num,
  halfwidth: num,
  lower: num,
  upper: num,
  outcome: z.string().optional(),
  supported: z.boolean().optional(),
  wins_treatment: z.number().int().optional(),
  wins_baseline: z.number().int().optional(),
  winsTreatment: z.number().int().optional(),
  winsBaseline: z.number().int().optional(),
  margin: num.optional(),
  alpha: num.optional(),
});
const marginSchema = z.object({ margin: num });
const alphaSchema = z.object({ alpha: num });
// decision-summary.json names the arms as { treatment: { arm, file, ... }, baseline: { arm, ... } } (or plain strings)
const armNameSchema = z.union([z.string().min(1), z.object({ arm: z.string().min(1) }).transform((a) => a.arm)]);
const armNamesSchema = z.object({ treatment: armNameSchema, baseline: armNameSchema });

const reasoningSchema = z.union([z.string(), z.array(z.string())]);
const verdictSchema = z.union([
  z.string().min(1),
  z.object({
    outcome: z.string().optional(),
    verdict: z.string().optional(),
    decision: z.string().optional(),
    summary: z.string().optional(),
    status: z.string().optional(),
    reasoning: reasoningSchema.optional(),
    reason: reasoningSchema.optional(),
    why: reasoningSchema.optional(),
  }),
]);

// --- reading ------------------------------------------------------------------------------------------------------
export function readRunDir(dir: string): RunData {
  const root = path.resolve(dir);
  if (!existsSync(root)) throw new RunDirError(`no run directory at ${dir}: pass the --out directory of an rx run`);
  if (!statSync(root).isDirectory()) throw new RunDirError(`${dir} is a file, not a run directory: pass the --out directory of an rx run`);
  if (!existsSync(path.join(root, 'run.json')) && !existsSync(path.join(root, 'record.json'))) {
    throw new RunDirError(`${dir} is not a run directory (no run.json or record.json): pass the --out directory of an rx run`);
  }
  return new RunDirReader(root).read();
}

class RunDirReader {
  private readonly notes: string[] = [];
  private readonly docs = new Map<string, unknown>();

  constructor(private readonly root: string) {}

  read(): RunData {
    const manifest = this.parsed('run.json', manifestSchema);
    const state = this.parsed('state.json', stateSchema);
    const recordIds = this.parsed('record.json', recordIdSchema);
    const spec = this.specParts();
    const decisionDoc = this.doc('decision-summary.json');
    const names = findFirst(decisionDoc, armNamesSchema)?.value ?? findFirst(this.doc('record.json'), armNamesSchema)?.value ?? null;
    const arms = this.arms(spec);
    const treatment = names?.treatment ?? arms.find((a) => a.role === 'treatment')?.name ?? null;
    const baseline = names?.baseline ?? arms.find((a) => a.role === 'baseline')?.name ?? null;
    for (const a of arms) {
      if (a.name === treatment) a.role = 'treatment';
      else if (a.name === baseline) a.role = 'baseline';
    }
    const steps = [...arms.flatMap((a) => this.trainingSteps(a.name)), ...this.pilotSteps()];
    if (!steps.some((s) => s.phase === 'training')) this.notes.push('no training step logs (<arm>/steps.jsonl)');
    const decision = this.decision(spec);
    const status = state ? { status: state.status, reason: state.reason ?? null } : null;
    return {
      root: this.root,
      runId: manifest?.runId ?? recordIds?.runId ?? recordIds?.run_id ?? state?.runId ?? null,
      title: spec?.title ?? null,
      createdAt: manifest?.createdAt ?? null,
      backend: manifest?.backend ?? null,
      status,
      arms,
      treatment,
      baseline,
      steps,
      devAccuracy: arms.flatMap((a) => this.devAccuracy(a.name)),
      gateReports: this.gateReports(spec),
      evals: this.evals(arms),
      decision,
      verdict: this.verdict(decision, status),
      notes: this.notes,
    };
  }

  // --- files ---
  private abs(rel: string): string {
    return path.join(this.root, rel);
  }

  /** the parsed JSON of a file; null when absent or not JSON (noted) */
  private doc(rel: string): unknown {
    if (this.docs.has(rel)) return this.docs.get(rel);
    let value: unknown = null;
    if (existsSync(this.abs(rel))) {
      try {
        value = JSON.parse(readFileSync(this.abs(rel), 'utf8'));
      } catch (err) {
        this.notes.push(`${rel} is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    this.docs.set(rel, value);
    return value;
  }

  private parsed<S extends z.ZodTypeAny>(rel: string, schema: S): z.infer<S> | null {
    const value = this.doc(rel);
    if (value === null) return null;
    const r = schema.safeParse(value);
    if (r.success) return r.data;
    this.notes.push(`${rel}: ${describeIssues(r.error)}`);
    return null;
  }

  private subdirs(rel = ''): string[] {
    const dir = this.abs(rel);
    if (!existsSync(dir)) return [];
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  }

  // --- arms ---
  private specParts(): SpecParts | null {
    for (const rel of ['spec.json', 'effective-config.json', 'record.json']) {
      const found = findFirst(this.doc(rel), specPartsSchema);
      if (found) return found.value;
    }
    this.notes.push('no spec in the run (spec.json, effective-config.json): arm roles and bounds come from the other files');
    return null;
  }

  private arms(spec: SpecParts | null): ArmInfo[] {
    if (spec) return spec.arms.map((a) => ({ name: a.name, advantage: a.advantage ?? null, role: roleOf(a.advantage) }));
    // no spec: the arm directories are those with a step log or an eval file
    return this.subdirs()
      .filter((d) => d !== BASE_MODEL_NAME && !d.startsWith('pilot_') && (existsSync(this.abs(path.join(d, 'steps.jsonl'))) || existsSync(this.abs(path.join(d, 'eval.jsonl')))))
      .map((name) => ({ name, advantage: null, role: null }));
  }

  // --- steps ---
  private trainingSteps(arm: string): StepSeries[] {
    let rel = path.join(arm, 'steps.jsonl');
    if (!existsSync(this.abs(rel))) {
      // the trainer's own log under the services' data dir, for the arm's run id
      const armRunId = this.armRunId(arm);
      const fallback = armRunId ? path.join('services', armRunId, arm, 'steps.jsonl') : null;
      if (!fallback || !existsSync(this.abs(fallback))) return [];
      rel = fallback;
    }
    const steps = this.stepLog(rel);
    return steps.length > 0 ? [{ arm, phase: 'training', source: rel, label: arm, steps }] : [];
  }

  /** the arm's dev accuracy curve from its training.json; none when the file or the field is absent (older runs) */
  private devAccuracy(arm: string): DevAccuracySeries[] {
    const found = findFirst(this.doc(path.join(arm, 'training.json')), devAccuracySchema);
    return found ? [{ arm, points: found.value.dev_accuracy.map((p) => ({ updates: p.updates, accuracy: p.accuracy, n: p.n })) }] : [];
  }

  /** the run id an arm trained under (state.json `arms.<arm>.runId`; a restarted arm gets a new one) */
  private armRunId(arm: string): string | null {
    const found = findFirst(this.doc('state.json'), z.object({ arms: z.record(z.string(), z.object({ runId: z.string() })) }));
    return found?.value.arms[arm]?.runId ?? null;
  }

  private pilotSteps(): StepSeries[] {
    const out: StepSeries[] = [];
    for (const pilot of this.subdirs().filter((d) => d.startsWith('pilot_'))) {
      for (const arm of this.subdirs(pilot)) {
        const rel = path.join(pilot, arm, 'steps.jsonl');
        if (!existsSync(this.abs(rel))) continue;
        const steps = this.stepLog(rel);
        if (steps.length > 0) out.push({ arm, phase: 'pilot', source: rel, label: `${arm} (${pilotLabel(pilot)})`, steps });
      }
    }
    return out;
  }

  /** the steps of a step log, each step once (the first line of a step wins), in step order */
  private stepLog(rel: string): StepPoint[] {
    const lines = readFileSync(this.abs(rel), 'utf8').split('\n');
    const byStep = new Map<number, StepPoint>();
    lines.forEach((text, i) => {
      if (text.trim() === '') return;
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        // a torn last line (a crash mid-append) is expected; any other is noted
        if (lines.slice(i + 1).some((l) => l.trim() !== '')) this.notes.push(`${rel}:${i + 1}: not valid JSON, line skipped`);
        return;
      }
      const r = stepLineSchema.safeParse(raw);
      if (!r.success) {
        this.notes.push(`${rel}:${i + 1}: ${describeIssues(r.error)}, line skipped`);
        return;
      }
      const s = r.data;
      if (byStep.has(s.step)) return;
      const rollouts = s.rollouts ?? [];
      const rewards = rollouts.map((x) => x.reward).filter(isNumber);
      byStep.set(s.step, {
        step: s.step,
        rewardMean: s.gate?.rewardMean ?? (rewards.length > 0 ? mean(rewards) : null),
        loss: s.loss ?? null,
        fracNonzeroAdvantage: s.gate?.fracNonzeroAdvantage ?? null,
        advantages: rollouts.map((x) => x.advantage).filter(isNumber),
        effectiveNeighbors: rollouts.map((x) => x.effectiveNeighbors).filter(isNumber),
      });
    });
    return [...byStep.values()].sort((a, b) => a.step - b.step);
  }

  // --- gates ---
  private gateReports(spec: SpecParts | null): GateReportEntry[] {
    const sources: Array<{ rel: string; dirLabel: string | null }> = [{ rel: 'pilot.json', dirLabel: null }];
    for (const pilot of this.subdirs().filter((d) => d.startsWith('pilot_'))) {
      for (const f of readdirSync(this.abs(pilot)).filter((n) => n.endsWith('.json')).sort()) sources.push({ rel: path.join(pilot, f), dirLabel: pilot });
    }
    sources.push({ rel: 'record.json', dirLabel: null });
    const checks = new Map((spec?.activation_gate?.checks ?? []).map((c) => [c.metric, c]));
    const seen = new Set<string>();
    const labels = new Set<string>();
    const out: GateReportEntry[] = [];
    for (const { rel, dirLabel } of sources) {
      for (const found of findAll(this.doc(rel), gateReportSchema)) {
        const results = found.value.results.map((r) => gateValue(r, checks.get(r.metric)));
        const key = canonicalJson(results.map((r) => [r.metric, r.value, r.pass]));
        if (seen.has(key)) continue;
        seen.add(key);
        let label = `${gateLabel(found, dirLabel)}${found.value.pass ? '' : ' (failed)'}`;
        for (let i = 2; labels.has(label); i++) label = `${gateLabel(found, dirLabel)} #${i}`;
        labels.add(label);
        out.push({ label, source: `${rel}${found.path.length > 0 ? `: ${formatPath(found.path)}` : ''}`, pass: found.value.pass, results });
      }
    }
    if (out.length === 0) this.notes.push('no gate report (pilot.json, record.json)');
    return out;
  }

  // --- evaluation ---
  private evals(arms: ArmInfo[]): EvalItems[] {
    const out: EvalItems[] = [];
    for (const model of [BASE_MODEL_NAME, ...arms.map((a) => a.name)]) {
      const rel = path.join(model, 'eval.jsonl');
      if (!existsSync(this.abs(rel))) {
        if (model !== BASE_MODEL_NAME) this.notes.push(`no ${rel}`);
        continue;
      }
      try {
        out.push({ model, source: rel, items: parseItemLines({ source: rel, text: readFileSync(this.abs(rel), 'utf8') }) });
      } catch (err) {
        if (!(err instanceof PairedItemsError)) throw err;
        this.notes.push(err.message);
      }
    }
    return out;
  }

  // --- decision and verdict ---
  private decision(spec: SpecParts | null): DecisionNumbers | null {
    for (const rel of ['decision-summary.json', 'record.json']) {
      const doc = this.doc(rel);
      const found = findFirst(doc, hoeffdingSchema);
      if (!found) continue;
      const h = found.value;
      const primary = spec?.decision_rule?.criteria?.find((c) => c.id === 'primary') ?? spec?.decision_rule?.criteria?.[0];
      return {
        n: h.n,
        effect: h.effect,
        halfwidth: h.halfwidth,
        lower: h.lower,
        upper: h.upper,
        outcome: h.outcome ?? null,
        supported: h.supported ?? null,
        winsTreatment: h.wins_treatment ?? h.winsTreatment ?? null,
        winsBaseline: h.wins_baseline ?? h.winsBaseline ?? null,
        margin: h.margin ?? findFirst(doc, marginSchema)?.value.margin ?? primary?.margin ?? null,
        alpha: h.alpha ?? findFirst(doc, alphaSchema)?.value.alpha ?? spec?.decision_rule?.alpha ?? null,
        source: `${rel}${found.path.length > 0 ? `: ${formatPath(found.path)}` : ''}`,
      };
    }
    this.notes.push('no decision (decision-summary.json)');
    return null;
  }

  private verdict(decision: DecisionNumbers | null, status: RunData['status']): Verdict | null {
    for (const rel of ['record.json', 'decision-summary.json']) {
      const doc = this.doc(rel);
      if (doc === null || typeof doc !== 'object' || !('verdict' in doc)) continue;
      const r = verdictSchema.safeParse((doc as { verdict: unknown }).verdict);
      if (!r.success) {
        this.notes.push(`${rel}: verdict: ${describeIssues(r.error)}`);
        continue;
      }
      const v = r.data;
      if (typeof v === 'string') return { headline: v, reasoning: [], source: rel };
      const headline = v.outcome ?? v.verdict ?? v.decision ?? v.summary ?? v.status ?? decision?.outcome ?? 'no verdict';
      const why = v.reasoning ?? v.reason ?? v.why ?? [];
      return { headline, reasoning: typeof why === 'string' ? [why] : why, source: rel };
    }
    if (decision?.outcome) return { headline: decision.outcome, reasoning: [], source: decision.source };
    if (status && status.status !== 'complete') return { headline: status.status, reasoning: status.reason ? [status.reason] : [], source: 'state.json' };
    return null;
  }
}

function roleOf(advantage: string | undefined): ArmRole | null {
  if (advantage === TREATMENT_ADVANTAGE) return 'treatment';
  if (advantage === BASELINE_ADVANTAGE) return 'baseline';
  return null;
}

type RawGateResult = z.infer<typeof gateReportSchema>['results'][number];

function gateValue(r: RawGateResult, check: z.infer<typeof gateCheckSchema> | undefined): GateValue {
  const bound: GateBound = r.bound ?? {
    ...(check?.one_of ? { one_of: check.one_of.map(Number) } : {}),
    ...(check?.min !== undefined ? { min: check.min } : {}),
    ...(check?.max !== undefined ? { max: check.max } : {}),
  };
  return {
    metric: r.metric,
    measures: r.measures ?? check?.measures ?? '',
    value: r.value,
    bound,
    boundText: r.boundText ?? describeBound(bound),
    pass: r.pass,
    detail: r.detail ?? null,
  };
}

/** "in {1}", ">= 8", "in [0.1, 0.9]" (as @rx/gates writes it) */
export function describeBound(b: GateBound): string {
  const parts: string[] = [];
  if (b.one_of) parts.push(`in {${b.one_of.join(', ')}}`);
  if (b.min !== undefined && b.max !== undefined) parts.push(`in [${b.min}, ${b.max}]`);
  else if (b.min !== undefined) parts.push(`>= ${b.min}`);
  else if (b.max !== undefined) parts.push(`<= ${b.max}`);
  return parts.join(' and ') || 'no bound';
}

/** `pilot bw0.5` from the nearest `bandwidth` around the report, else the pilot directory, else where it was */
function gateLabel(found: Found<unknown>, dirLabel: string | null): string {
  const around = [...found.ancestors, found.value].reverse();
  for (const a of around) {
    if (a !== null && typeof a === 'object' && !Array.isArray(a)) {
      const bw = (a as Record<string, unknown>)['bandwidth'];
      if (typeof bw === 'number' && Number.isFinite(bw)) return `pilot bw${Number.isInteger(bw) ? bw.toFixed(1) : String(bw)}`;
    }
  }
  if (dirLabel) return dirLabel;
  return found.path.length > 0 ? formatPath(found.path) : 'gates';
}

/** `pilot_bw0.5_FAILED_kernel_effective_neighbors_p10` -> `pilot bw0.5, failed kernel_effective_neighbors_p10` */
export function pilotLabel(dir: string): string {
  const m = /^pilot_bw([^_]+)(?:_FAILED_(.+))?$/.exec(dir);
  if (!m) return dir;
  return `pilot bw${m[1]}${m[2] ? `, failed ${m[2]}` : ''}`;
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}

function isNumber(x: number | undefined): x is number {
  return typeof x === 'number';
}

// mean = (1/n) sum x_i
function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}
