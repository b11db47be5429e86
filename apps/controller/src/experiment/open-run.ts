// Opening a run: a new one (spec [+ override] -> run.json, spec.json, state.json) or an existing one (--resume: its
// files read back and checked against its state), everything checked before anything is written. The lock that
// keeps a second controller off the run is taken by runExperiment (run-lock.ts).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CHAR_BASE_MODELS } from '@rx/backend';
import {
  checkRunFilesAgainstState,
  checkWritableDir,
  loadRunState,
  readManifest,
  readRunFile,
  readRunFileIfExists,
  RunDir,
  RunStateStore,
  writeRunFile,
  type RunManifest,
} from '@rx/run-dir';
import { applySpecOverride, jsonSyntaxWhere, loadSpecText, pilotSettings, treatmentArm, type ExperimentSpec, type SpecOverride } from '@rx/spec';
import { canonicalJson, sha256Hex } from '@rx/run-dir';
import { EXTERNAL_NEEDS_BACKEND, RunUserError, type BackendKind, type RunOptions } from '../composition/run-options';
import { planBudgetRaise } from './budget-raise';
import { tinkerCredentials } from '../composition/tinker-credentials';

export interface OpenedRun {
  dir: RunDir;
  manifest: RunManifest;
  spec: ExperimentSpec;
  sourceSpec: ExperimentSpec | null;
  state: RunStateStore;
  resumed: boolean;
  /** a resumed run whose budget this attempt raised (--override raise-budget.json, budget-raise.ts) */
  budgetRaised?: boolean;
}

/** a file the user named (`what`: spec, override), or one line saying why it cannot be read */
function readUserFile(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new RunUserError(`cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
}

function readSpec(file: string): { spec: ExperimentSpec; text: string } {
  const text = readUserFile(file, 'spec');
  const parsed = loadSpecText(text);
  if (!parsed.ok) throw new RunUserError(`${file}: invalid spec (${parsed.errors.length} error${parsed.errors.length === 1 ? '' : 's'})`, parsed.errors);
  return { spec: parsed.spec, text };
}

function readOverride(file: string): { override: SpecOverride; text: string } {
  const text = readUserFile(file, 'override');
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new RunUserError(`${file}: invalid JSON: ${jsonSyntaxWhere(err, text)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RunUserError(`${file}: must be a JSON object (a partial spec)`);
  return { override: value as SpecOverride, text };
}

export function defaultBackend(spec: ExperimentSpec): BackendKind {
  return CHAR_BASE_MODELS.includes(spec.base_model) ? 'embedded' : 'tinker';
}

function newRunId(outDir: string): string {
  const base = path.basename(path.resolve(outDir)).replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 24) || 'run';
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${base}-${stamp}-${randomBytes(2).toString('hex')}`;
}

export type OpenRunOptions = Pick<RunOptions, 'specPath' | 'outDir' | 'overridePath' | 'resumeDir' | 'backend' | 'services' | 'config'>;

export function openRun(opts: OpenRunOptions): OpenedRun {
  return planRun(opts).open();
}

/**
 * Everything about a run that can be checked without writing: the flags, the spec, the run directory (a resumed
 * one's files against its state); `open` then writes a new run's files (a resumed run's are only read).
 */
export function planRun(opts: OpenRunOptions): { backend: BackendKind; spec: ExperimentSpec; open: () => OpenedRun } {
  if (opts.resumeDir) {
    const dir = new RunDir(opts.resumeDir);
    if (!dir.exists(dir.root)) throw new RunUserError(`--resume ${opts.resumeDir}: no such directory`);
    try {
      checkWritableDir(dir.root);
    } catch (err) {
      throw new RunUserError(`--resume ${opts.resumeDir}: ${(err as Error).message}; a run resumes in its own directory, which must be writable (nothing was written)`);
    }
    const manifest = readManifest(dir);
    const spec = readRunFile(dir, 'spec.json');
    if (opts.specPath) {
      const given = sha256Hex(readFileSync(opts.specPath));
      if (given !== manifest.spec.sourceSha256) throw new RunUserError(`--spec ${opts.specPath} is not the spec run ${manifest.runId} was started from (${manifest.spec.source}); drop --spec to resume`);
    }
    if (opts.backend && opts.backend !== manifest.backend) throw new RunUserError(`run ${manifest.runId} uses the ${manifest.backend} backend; it cannot resume on ${opts.backend}`);
    if (opts.services === 'external' && manifest.backend === 'embedded' && !opts.config.RX_BACKEND_URL) throw new RunUserError(EXTERNAL_NEEDS_BACKEND);
    const state = loadRunState(dir);
    // a half-deleted run is refused here, before anything starts
    checkRunFilesAgainstState(dir, state.state, spec.arms.map((a) => a.name));
    const sourceSpec = readRunFileIfExists(dir, 'spec.source.json');
    // the one override a resumed run takes: a raise of its budget, recorded as a revision (spec.json is kept)
    const raise = opts.overridePath ? (({ override, text }) => planBudgetRaise(dir, spec, state.state, opts.overridePath as string, override, sha256Hex(text)))(readOverride(opts.overridePath)) : null;
    const opened: OpenedRun = { dir, manifest, spec, sourceSpec, state, resumed: true, budgetRaised: raise !== null };
    return {
      backend: manifest.backend,
      spec,
      open: () => {
        raise?.write();
        return opened;
      },
    };
  }

  if (!opts.specPath) throw new RunUserError('--spec is required (or --resume <dir>)');
  if (!opts.outDir) throw new RunUserError('--out is required (or --resume <dir>)');
  const { spec: sourceSpec, text } = readSpec(opts.specPath);
  let spec = sourceSpec;
  let override: RunManifest['override'] = null;
  if (opts.overridePath) {
    const o = readOverride(opts.overridePath);
    const applied = applySpecOverride(sourceSpec, o.override);
    if (!applied.ok) throw new RunUserError(`${opts.overridePath}: the spec with this override is invalid (${applied.errors.length} error${applied.errors.length === 1 ? '' : 's'})`, applied.errors);
    spec = applied.spec;
    override = { source: opts.overridePath, sha256: sha256Hex(o.text) };
  }
  // the pilot's treatment steps draw the first prompts of the order too (the spec checks only steps * groups)
  const pilotPrompts = pilotSettings(spec).steps * treatmentArm(spec).groups_per_batch;
  if (spec.dataset.n_examples < pilotPrompts) {
    throw new RunUserError(`dataset.n_examples is ${spec.dataset.n_examples}, but the pilot's ${pilotSettings(spec).steps} ${treatmentArm(spec).name} steps draw ${pilotPrompts} prompts: raise it`);
  }
  const backend = opts.backend ?? defaultBackend(spec);
  if (backend === 'tinker') tinkerCredentials(opts.config);
  if (backend === 'embedded' && opts.services === 'external' && !opts.config.RX_BACKEND_URL) throw new RunUserError(EXTERNAL_NEEDS_BACKEND);

  const dir = new RunDir(opts.outDir);
  try {
    checkWritableDir(dir.root);
  } catch (err) {
    throw new RunUserError(`--out ${opts.outDir}: ${(err as Error).message}; choose a directory you can write (nothing was written)`);
  }
  if (dir.exists(dir.runFile)) {
    const existing = readManifest(dir);
    const status = readRunFileIfExists(dir, 'state.json')?.status ?? 'unknown';
    if (status === 'complete' || status === 'stopped') {
      throw new RunUserError(`${opts.outDir} already holds run ${existing.runId}, ${status} (rx status ${opts.outDir}); to run again, remove it or choose another --out`);
    }
    throw new RunUserError(`${opts.outDir} already holds run ${existing.runId} (${status}): resume it with --resume ${opts.outDir}, or choose another --out`);
  }
  if (!dir.isEmpty()) throw new RunUserError(`${opts.outDir} is not empty and holds no run: choose an empty or new directory for --out`);
  const manifest: RunManifest = {
    version: 1,
    runId: newRunId(opts.outDir),
    createdAt: new Date().toISOString(),
    spec: { source: opts.specPath, sourceSha256: sha256Hex(text), sha256: sha256Hex(canonicalJson(spec)) },
    override,
    backend,
    services: opts.services,
  };
  return {
    backend,
    spec,
    open: () => {
      writeRunFile(dir, 'spec.json', spec);
      if (override) writeRunFile(dir, 'spec.source.json', sourceSpec);
      writeRunFile(dir, 'run.json', manifest);
      return { dir, manifest, spec, sourceSpec: override ? sourceSpec : null, state: RunStateStore.create(dir, manifest.runId), resumed: false };
    },
  };
}
