// The layout of one run directory (every file's name and place, here only) and how files are written: whole files
// atomically (write a temporary file, then rename), step logs appended one line per completed step. Every phase
// writes its result here when it completes, so a resumed run reads what is done and continues from there. What
// each file holds is its schema's (run-files.ts: the catalog, the checked writer and reader).
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/** the model evaluated with the LoRA at its shared initial state (B = 0: the base model's function) */
export const BASE_EVAL_NAME = 'base';

/** the name of every file of a run directory; <arm>/, <model>/ and <pilot>/ stand for each arm's, model's and pilot's directory */
export const RUN_FILE_NAMES = {
  manifest: 'run.json',
  /** each raise of the budget on a resume (rx run --resume DIR --override raise-budget.json) */
  budgetRevisions: 'budget-revisions.json',
  spec: 'spec.json',
  /** the spec as given, before its override (only when --override was given) */
  sourceSpec: 'spec.source.json',
  state: 'state.json',
  effectiveConfig: 'effective-config.json',
  preflight: 'preflight.json',
  sharedInit: 'shared-init.json',
  pilot: 'pilot.json',
  gateReport: '<pilot>/gate-report.json',
  heldout: '<pilot>/heldout.jsonl',
  training: 'training.json',
  armTraining: '<arm>/training.json',
  steps: '<arm>/steps.jsonl',
  stepMetrics: '<arm>/metrics.jsonl',
  transcripts: '<arm>/transcripts.jsonl',
  evaluation: 'evaluation.json',
  eval: '<model>/eval.jsonl',
  partialEval: '<model>/eval.partial.jsonl',
  decision: 'decision-summary.json',
  record: 'record.json',
  deadLetters: 'dead-letters.jsonl',
  lock: 'controller.lock',
  logs: 'logs',
  endpoints: 'logs/endpoints.json',
  services: 'services',
  report: 'report.html',
} as const;

const N = RUN_FILE_NAMES;
/** the file name inside its arm's, model's or pilot's directory */
const leaf = (name: string): string => name.slice(name.indexOf('/') + 1);

export class RunDir {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  // --- the files -----------------------------------------------------------------------------------------------
  get runFile(): string { return this.path(N.manifest); }
  get specFile(): string { return this.path(N.spec); }
  get sourceSpecFile(): string { return this.path(N.sourceSpec); }
  get stateFile(): string { return this.path(N.state); }
  get effectiveConfigFile(): string { return this.path(N.effectiveConfig); }
  get preflightFile(): string { return this.path(N.preflight); }
  get sharedInitFile(): string { return this.path(N.sharedInit); }
  get pilotFile(): string { return this.path(N.pilot); }
  /** the training phase's summary (each arm's own is trainingFile(arm)) */
  get trainingSummaryFile(): string { return this.path(N.training); }
  get evaluationFile(): string { return this.path(N.evaluation); }
  get decisionFile(): string { return this.path(N.decision); }
  get recordFile(): string { return this.path(N.record); }
  get logsDir(): string { return this.path(N.logs); }
  /** every dead letter of the run's steps, one JSON line each, as the controller saw them */
  get deadLettersFile(): string { return this.path(N.deadLetters); }
  /** the pid and host of the controller driving the run (run-lock.ts) */
  get lockFile(): string { return this.path(N.lock); }
  /** where each running service answers (health, metrics), rewritten each time the stack starts */
  get endpointsFile(): string { return this.path(N.endpoints); }
  /** RX_DATA_DIR of the services rx run spawns (the policy server's weights and states) */
  get servicesDataDir(): string { return this.path(N.services); }
  get reportFile(): string { return this.path(N.report); }

  /** `pilot_bw0.5`: the pilot at one bandwidth */
  pilotDir(bandwidth: number): string { return this.path(pilotDirName(bandwidth)); }
  /** `pilot_bw0.5_FAILED_ess`: a failed pilot kept beside the calibration */
  failedPilotDir(bandwidth: number, gate: string): string { return this.path(`${pilotDirName(bandwidth)}_FAILED_${gate}`); }
  armDir(arm: string): string { return this.path(arm); }
  stepsFile(arm: string): string { return this.path(arm, leaf(N.steps)); }
  /** an arm's step log in a pilot's directory (pilotDir, failedPilotDir) */
  pilotStepsFile(pilotDir: string, arm: string): string { return path.join(pilotDir, arm, leaf(N.steps)); }
  stepMetricsFile(arm: string): string { return this.path(arm, leaf(N.stepMetrics)); }
  transcriptsFile(arm: string): string { return this.path(arm, leaf(N.transcripts)); }
  /** a pilot's gate report, in the pilot's directory (pilotDir, failedPilotDir) */
  gateReportFile(pilotDir: string): string { return path.join(pilotDir, leaf(N.gateReport)); }
  heldoutFile(pilotDir: string): string { return path.join(pilotDir, leaf(N.heldout)); }
  trainingFile(arm: string): string { return this.path(arm, leaf(N.armTraining)); }
  evalFile(model: string): string { return this.path(model, leaf(N.eval)); }
  partialEvalFile(model: string): string { return this.path(model, leaf(N.partialEval)); }

  path(...parts: string[]): string {
    return path.join(this.root, ...parts);
  }

  relative(file: string): string {
    return path.relative(this.root, file);
  }

  // --- writing and reading ---------------------------------------------------------------------------------------
  exists(file: string): boolean {
    return existsSync(file);
  }

  /** JSON, pretty, atomically */
  writeJson(file: string, value: unknown): void {
    this.writeText(file, `${JSON.stringify(value, null, 2)}\n`);
  }

  writeText(file: string, text: string): void {
    makeDirs(path.dirname(file));
    const tmp = `${file}.tmp-${process.pid}`;
    try {
      writeFileSync(tmp, text, 'utf8');
      renameSync(tmp, file);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  }

  /** a file's JSON, unchecked: a file of the run is read with its schema (run-files.ts: readRunFile) */
  readJson(file: string): unknown {
    return JSON.parse(readFileSync(file, 'utf8'));
  }

  readText(file: string): string {
    return readFileSync(file, 'utf8');
  }

  appendLine(file: string, value: unknown): void {
    makeDirs(path.dirname(file));
    appendFileSync(file, `${JSON.stringify(value)}\n`, 'utf8');
  }

  /** the lines of a JSONL file that parse (a torn last line from a crash is dropped); [] when absent */
  readLines<T = unknown>(file: string): T[] {
    if (!existsSync(file)) return [];
    const out: T[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      try {
        out.push(JSON.parse(line) as T);
      } catch {
        break;
      }
    }
    return out;
  }

  /** rewrites a JSONL file with these lines (atomically) */
  writeLines(file: string, values: readonly unknown[]): void {
    this.writeText(file, values.map((v) => `${JSON.stringify(v)}\n`).join(''));
  }

  move(from: string, to: string): void {
    if (existsSync(to)) rmSync(to, { recursive: true, force: true });
    makeDirs(path.dirname(to));
    renameSync(from, to);
  }

  remove(file: string): void {
    rmSync(file, { recursive: true, force: true });
  }

  /** true when the directory is missing or empty */
  isEmpty(): boolean {
    return !existsSync(this.root) || readdirSync(this.root).length === 0;
  }
}

/**
 * mkdir -p that cannot spin: Node's recursive mkdir loops forever under /proc (ENOENT from a parent that exists),
 * so each missing directory is made one at a time below the nearest one that exists; a file on the way is ENOTDIR.
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let p = path.resolve(dir); ; ) {
    try {
      if (statSync(p).isDirectory()) break;
      throw Object.assign(new Error(`ENOTDIR: ${p} is not a directory`), { code: 'ENOTDIR', path: p });
    } catch (err) {
      const parent = path.dirname(p);
      // ENOTDIR from stat: a file further up; walk up to name it
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && !(code === 'ENOTDIR' && (err as NodeJS.ErrnoException).syscall === 'stat')) || parent === p) throw err;
      missing.push(p);
      p = parent;
    }
  }
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/**
 * Whether a new run can be written at `dir`, without writing anything that stays: the directory itself, or the
 * nearest directory above it that exists, takes a file (written and removed at once). Throws the cause in words (a
 * file in the way, a path under a file, /proc, no permission, a read-only file system).
 */
export function checkWritableDir(dir: string): void {
  let at = path.resolve(dir);
  try {
    for (;;) {
      try {
        if (!statSync(at).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR', path: at });
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const parent = path.dirname(at);
        if ((code !== 'ENOENT' && !(code === 'ENOTDIR' && (err as NodeJS.ErrnoException).syscall === 'stat')) || parent === at) throw err;
        at = parent;
      }
    }
    const probe = path.join(at, `.rx-write-check-${process.pid}`);
    writeFileSync(probe, '');
    unlinkSync(probe);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const where = e.code === 'ENOTDIR' ? (e.path ?? at) : at;
    const why: Record<string, string> = {
      ENOTDIR: `${where} is not a directory`,
      ENOENT: `${where} takes no new files`,
      EACCES: `no permission to write in ${where}`,
      EPERM: `no permission to write in ${where}`,
      EROFS: `${where} is on a read-only file system`,
    };
    throw new Error(why[e.code ?? ''] ?? `cannot write in ${where} (${e.code ?? e.message})`);
  }
}

export function pilotDirName(bandwidth: number): string {
  return `pilot_bw${formatBandwidth(bandwidth)}`;
}

/** 0.5 -> "0.5", 1 -> "1.0" (as the spec writes the calibration set {0.5, 1.0}) */
export function formatBandwidth(h: number): string {
  return Number.isInteger(h) ? h.toFixed(1) : String(h);
}
