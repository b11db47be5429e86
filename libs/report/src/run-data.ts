// Reading a run directory (`rx run --out <dir>`) for the report, through the run-directory contract (@rx/run-dir:
// its layout, each file's schema and reader). Every part but the marker file (run.json or record.json) is
// optional: a part that is missing or does not read back (RunFileError) becomes a note in the report, never a
// failure. What each part gives the report:
//
//   run.json, state.json          the run id, creation time, backend; status and reason; each arm's run id
//   spec.json | effective-config.json                 title, arms (name, advantage), decision rule, gate bounds
//   <arm>/steps.jsonl             one trainer StepRecord per completed step (the trainer's own log under services/
//                                 when the arm's is absent)
//   <arm>/training.json           the arm's dev accuracy curve
//   pilot_bw<h>[_FAILED_<gate>]/  each pilot's step logs, and its gate-report.json
//   pilot.json | <pilot>/gate-report.json | record.json (gates)      the gate reports, each pilot's once
//   <model>/eval.jsonl            {"item_id", "correct"} per test item, for each arm and `base`
//   decision-summary.json | record.json (decision)    the paired Hoeffding numbers, the rule (margin, alpha)
//   record.json                   the verdict {outcome, reasoning}
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import {
  BASE_EVAL_NAME,
  formatBandwidth,
  readRunFileIfExists,
  RUN_FILE_NAMES,
  RUN_LINE_FILES,
  RunDir,
  RunFileError,
  type PilotReport,
  type RunFileName,
  type RunFileType,
} from '@rx/run-dir';
import { BASELINE_ADVANTAGE, TREATMENT_ADVANTAGE } from '@rx/spec';
import { DEFAULT_BOUND, parseItemLines, PairedItemsError, type BoundName, type ItemLine } from '@rx/stats';

/** the model evaluated at the shared initial LoRA state */
const BASE_MODEL_NAME = BASE_EVAL_NAME;

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
}

export interface GateReportEntry {
  /** `pilot bw0.5 (failed)` */
  label: string;
  /** `pilot.json: pilots[0].report` */
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
  /** the pre-registered bound, the verdict's (hoeffding in runs made before bounds were selectable) */
  bound: BoundName;
  /** the other bounds on the same pairs, as the decision phase wrote them: exploratory, never the verdict */
  exploratory: Array<{ bound: BoundName; halfwidth: number; lower: number; upper: number; outcome: string }>;
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

/** what the report takes from the spec (spec.json) or, without it, from the effective configuration */
interface RunDesign {
  title: string | null;
  arms: Array<{ name: string; advantage: string }>;
  /** metric -> what it measures, from the spec's activation gate */
  measures: Map<string, string>;
}

// --- reading ------------------------------------------------------------------------------------------------------
export function readRunDir(dir: string): RunData {
  const root = path.resolve(dir);
  if (!existsSync(root)) throw new RunDirError(`no run directory at ${dir}: pass the --out directory of an rx run`);
  if (!statSync(root).isDirectory()) throw new RunDirError(`${dir} is a file, not a run directory: pass the --out directory of an rx run`);
  if (!existsSync(path.join(root, RUN_FILE_NAMES.manifest)) && !existsSync(path.join(root, RUN_FILE_NAMES.record))) {
    throw new RunDirError(`${dir} is not a run directory (no ${RUN_FILE_NAMES.manifest} or ${RUN_FILE_NAMES.record}): pass the --out directory of an rx run`);
  }
  const data = new RunDirReader(new RunDir(root)).read();
  // a report of nothing is no report: one line naming what could not be read
  const readable = data.runId !== null || data.title !== null || data.status !== null || data.steps.length > 0 || data.evals.length > 0 || data.decision !== null || data.gateReports.length > 0;
  if (!readable) {
    const why = data.notes.slice(0, 3).join('; ') || 'no run file could be read';
    throw new RunDirError(`nothing in ${dir} is readable as a run (${why}); no report was written`);
  }
  return data;
}

class RunDirReader {
  private readonly notes: string[] = [];
  private readonly parts = new Map<string, unknown>();

  constructor(private readonly dir: RunDir) {}

  read(): RunData {
    const manifest = this.part('run.json');
    const state = this.part('state.json');
    const record = this.part('record.json');
    const design = this.design();
    const decisionSummary = this.part('decision-summary.json') ?? record?.decision ?? null;
    const arms = this.arms(design);
    const treatment = decisionSummary?.treatment.arm ?? arms.find((a) => a.role === 'treatment')?.name ?? null;
    const baseline = decisionSummary?.baseline.arm ?? arms.find((a) => a.role === 'baseline')?.name ?? null;
    for (const a of arms) {
      if (a.name === treatment) a.role = 'treatment';
      else if (a.name === baseline) a.role = 'baseline';
    }
    const steps = [...arms.flatMap((a) => this.trainingSteps(a.name)), ...this.pilotSteps()];
    if (!steps.some((s) => s.phase === 'training')) this.notes.push('no training step logs (<arm>/steps.jsonl)');
    const decision = this.decision(record);
    const status = state ? { status: state.status, reason: state.reason } : null;
    return {
      root: this.dir.root,
      runId: manifest?.runId ?? record?.run_id ?? state?.runId ?? null,
      title: design?.title ?? record?.title ?? null,
      createdAt: manifest?.createdAt ?? null,
      backend: manifest?.backend ?? null,
      status,
      arms,
      treatment,
      baseline,
      steps,
      devAccuracy: arms.flatMap((a) => this.devAccuracy(a.name)),
      gateReports: this.gateReports(design, record),
      evals: this.evals(arms),
      decision,
      verdict: this.verdict(record, decision, status),
      notes: this.notes,
    };
  }

  // --- files ---
  private rel(file: string): string {
    return this.dir.relative(file);
  }

  /** a file of the run through its schema (read once); null when absent or damaged (noted, with the file named) */
  private part<N extends RunFileName>(name: N, file: string = this.dir.path(name)): RunFileType<N> | null {
    if (this.parts.has(file)) return this.parts.get(file) as RunFileType<N> | null;
    let value: RunFileType<N> | null = null;
    try {
      value = readRunFileIfExists(this.dir, name, file);
    } catch (err) {
      if (!(err instanceof RunFileError)) throw err;
      // the contract's one line, the run's root left out (the report names files relative to it)
      this.notes.push(err.message.split(`${this.dir.root}${path.sep}`).join(''));
    }
    this.parts.set(file, value);
    return value;
  }

  private subdirs(rel = ''): string[] {
    const dir = this.dir.path(rel);
    if (!existsSync(dir)) return [];
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  }

  private pilotDirs(): string[] {
    return this.subdirs().filter((d) => d.startsWith('pilot_'));
  }

  // --- arms ---
  private design(): RunDesign | null {
    const spec = this.part('spec.json');
    if (spec) {
      return {
        title: spec.title,
        arms: spec.arms.map((a) => ({ name: a.name, advantage: a.advantage })),
        measures: new Map(spec.activation_gate.checks.map((c) => [c.metric, c.measures ?? ''])),
      };
    }
    const config = this.part('effective-config.json');
    if (config) return { title: config.title, arms: config.arms, measures: new Map() };
    this.notes.push('no spec in the run (spec.json, effective-config.json): arm roles and bounds come from the other files');
    return null;
  }

  private arms(design: RunDesign | null): ArmInfo[] {
    if (design) return design.arms.map((a) => ({ name: a.name, advantage: a.advantage, role: roleOf(a.advantage) }));
    // no spec: the arm directories are those with a step log or an eval file
    return this.subdirs()
      .filter((d) => d !== BASE_MODEL_NAME && !d.startsWith('pilot_') && (existsSync(this.dir.stepsFile(d)) || existsSync(this.dir.evalFile(d))))
      .map((name) => ({ name, advantage: null, role: null }));
  }

  // --- steps ---
  private trainingSteps(arm: string): StepSeries[] {
    const file = this.dir.stepsFile(arm);
    if (!existsSync(file)) return [];
    const steps = this.stepLog(file);
    return steps.length > 0 ? [{ arm, phase: 'training', source: this.rel(file), label: arm, steps }] : [];
  }

  /** the arm's dev accuracy curve from its training.json; none when the file or the field is absent (older runs) */
  private devAccuracy(arm: string): DevAccuracySeries[] {
    const training = this.part('<arm>/training.json', this.dir.trainingFile(arm));
    const points = training?.dev_accuracy ?? [];
    return points.length > 0 ? [{ arm, points: points.map((p) => ({ updates: p.updates, accuracy: p.accuracy, n: p.n })) }] : [];
  }

  private pilotSteps(): StepSeries[] {
    const out: StepSeries[] = [];
    for (const pilot of this.pilotDirs()) {
      for (const arm of this.subdirs(pilot)) {
        const file = this.dir.pilotStepsFile(this.dir.path(pilot), arm);
        if (!existsSync(file)) continue;
        const steps = this.stepLog(file);
        if (steps.length > 0) out.push({ arm, phase: 'pilot', source: this.rel(file), label: `${arm} (${pilotLabel(pilot)})`, steps });
      }
    }
    return out;
  }

  /**
   * The steps of a step log, each line checked against the trainer's StepRecord schema (the contract's), each step
   * once (the first line of a step wins), in step order. A torn last line (a crash mid-append) is expected; any
   * other line that does not read is noted and skipped.
   */
  private stepLog(file: string): StepPoint[] {
    const schema: z.ZodTypeAny = RUN_LINE_FILES[RUN_FILE_NAMES.steps];
    const rel = this.rel(file);
    const lines = readFileSync(file, 'utf8').split('\n');
    const byStep = new Map<number, StepPoint>();
    lines.forEach((text, i) => {
      if (text.trim() === '') return;
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        if (lines.slice(i + 1).some((l) => l.trim() !== '')) this.notes.push(`${rel}:${i + 1}: not valid JSON, line skipped`);
        return;
      }
      const r = schema.safeParse(raw);
      if (!r.success) {
        this.notes.push(`${rel}:${i + 1}: ${describeIssues(r.error)}, line skipped`);
        return;
      }
      const s = r.data as z.output<(typeof RUN_LINE_FILES)[typeof RUN_FILE_NAMES.steps]>;
      if (byStep.has(s.step)) return;
      byStep.set(s.step, {
        step: s.step,
        rewardMean: s.gate.rewardMean,
        loss: s.loss,
        advantages: s.rollouts.map((x) => x.advantage),
        effectiveNeighbors: s.rollouts.map((x) => x.effectiveNeighbors),
      });
    });
    return [...byStep.values()].sort((a, b) => a.step - b.step);
  }

  // --- gates ---
  /**
   * The gate report of every pilot, once each: pilot.json's (pilots[i].report), else each pilot directory's
   * gate-report.json, else the record's copy of pilot.json; the failed pilot first, as they ran.
   */
  private gateReports(design: RunDesign | null, record: RunFileType<'record.json'> | null): GateReportEntry[] {
    const found: Array<{ pilot: PilotReport; source: string }> = [];
    const pilotFile = this.part('pilot.json');
    if (pilotFile) pilotFile.pilots.forEach((p, i) => found.push({ pilot: p, source: `${RUN_FILE_NAMES.pilot}: pilots[${i}].report` }));
    else {
      for (const pilot of this.pilotDirs()) {
        const file = this.dir.gateReportFile(this.dir.path(pilot));
        const p = this.part('<pilot>/gate-report.json', file);
        if (p) found.push({ pilot: p, source: `${this.rel(file)}: report` });
      }
      // the pilot that ran first was kept as pilot_bw<h>_FAILED_<gate>: the order of the directories is not the runs'
      found.sort((a, b) => Number(a.pilot.report.pass) - Number(b.pilot.report.pass));
      if (found.length === 0 && record?.gates) record.gates.pilots.forEach((p, i) => found.push({ pilot: p, source: `${RUN_FILE_NAMES.record}: gates.pilots[${i}].report` }));
    }
    const out: GateReportEntry[] = found.map(({ pilot, source }) => ({
      label: `pilot bw${formatBandwidth(pilot.bandwidth)}${pilot.report.pass ? '' : ' (failed)'}`,
      source,
      pass: pilot.report.pass,
      results: pilot.report.results.map((r) => ({
        metric: r.metric,
        measures: r.measures || design?.measures.get(r.metric) || '',
        value: r.value,
        bound: r.bound,
        boundText: r.boundText,
        pass: r.pass,
      })),
    }));
    if (out.length === 0) this.notes.push('no gate report (pilot.json, record.json)');
    return out;
  }

  // --- evaluation ---
  private evals(arms: ArmInfo[]): EvalItems[] {
    const out: EvalItems[] = [];
    for (const model of [BASE_MODEL_NAME, ...arms.map((a) => a.name)]) {
      const file = this.dir.evalFile(model);
      const rel = this.rel(file);
      if (!existsSync(file)) {
        if (model !== BASE_MODEL_NAME) this.notes.push(`no ${rel}`);
        continue;
      }
      try {
        out.push({ model, source: rel, items: parseItemLines({ source: rel, text: readFileSync(file, 'utf8') }) });
      } catch (err) {
        if (!(err instanceof PairedItemsError)) throw err;
        this.notes.push(err.message);
      }
    }
    return out;
  }

  // --- decision and verdict ---
  private decision(record: RunFileType<'record.json'> | null): DecisionNumbers | null {
    const fromFile = this.part('decision-summary.json');
    const d = fromFile ?? record?.decision ?? null;
    if (!d) {
      this.notes.push('no decision (decision-summary.json)');
      return null;
    }
    return {
      n: d.n,
      effect: d.effect,
      halfwidth: d.halfwidth,
      lower: d.lower,
      upper: d.upper,
      outcome: d.outcome,
      supported: d.supported,
      winsTreatment: d.wins_treatment,
      winsBaseline: d.wins_baseline,
      margin: d.rule.margin,
      alpha: d.rule.alpha,
      bound: d.rule.bound ?? DEFAULT_BOUND,
      exploratory: (d.exploratory ?? []).map((e) => ({ bound: e.bound, halfwidth: e.halfwidth, lower: e.lower, upper: e.upper, outcome: e.outcome })),
      source: fromFile ? RUN_FILE_NAMES.decision : `${RUN_FILE_NAMES.record}: decision`,
    };
  }

  private verdict(record: RunFileType<'record.json'> | null, decision: DecisionNumbers | null, status: RunData['status']): Verdict | null {
    if (record) return { headline: record.verdict.outcome, reasoning: record.verdict.reasoning, source: RUN_FILE_NAMES.record };
    if (decision?.outcome) return { headline: decision.outcome, reasoning: [], source: decision.source };
    if (status && status.status !== 'complete') return { headline: status.status, reasoning: status.reason ? [status.reason] : [], source: RUN_FILE_NAMES.state };
    return null;
  }
}

function roleOf(advantage: string | undefined): ArmRole | null {
  if (advantage === TREATMENT_ADVANTAGE) return 'treatment';
  if (advantage === BASELINE_ADVANTAGE) return 'baseline';
  return null;
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
