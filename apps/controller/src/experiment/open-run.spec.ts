import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseControllerConfig } from '../config';
import { REPO_ROOT } from '../infra/repo-root';
import { sha256Hex } from '@rx/run-dir';
import { defaultBackend, openRun } from './open-run';
import { RunUserError } from '../composition/run-options';

const EMBEDDED = path.join(REPO_ROOT, 'specs', 'embedded.json');
const config = (env: Record<string, string> = {}) => parseControllerConfig(env);

describe('opening a run', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(path.join(tmpdir(), 'rx-open-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes run.json, spec.json (override applied) and state.json for a new run', () => {
    const override = path.join(root, 'o.json');
    writeFileSync(override, JSON.stringify({ steps: 3, eval: { n_examples: 10 }, feasibility: { effective_config: { steps: 3, n_eval: 10 } } }));
    const out = path.join(root, 'run');
    const run = openRun({ specPath: EMBEDDED, outDir: out, overridePath: override, services: 'spawn', config: config() });
    expect(run.resumed).toBe(false);
    expect(run.spec.steps).toBe(3);
    expect(run.manifest.backend).toBe('embedded');
    expect(run.manifest.spec.sourceSha256).toBe(sha256Hex(readFileSync(EMBEDDED)));
    expect(run.manifest.override?.sha256).toBe(sha256Hex(readFileSync(override)));
    for (const f of ['run.json', 'spec.json', 'spec.source.json', 'state.json']) expect(existsSync(path.join(out, f))).toBe(true);
    // the same directory again: a resume, not a second run
    expect(() => openRun({ specPath: EMBEDDED, outDir: out, services: 'spawn', config: config() })).toThrow(/already holds run .*resume it with --resume/);
    const again = openRun({ resumeDir: out, services: 'spawn', config: config() });
    expect([again.resumed, again.manifest.runId, again.spec.steps]).toEqual([true, run.manifest.runId, 3]);
    expect(() => openRun({ resumeDir: out, overridePath: override, services: 'spawn', config: config() })).toThrow(/a resumed run keeps its spec.json; --override with --resume takes only a raise of the budget/);
    // a raise of the budget: recorded as a revision when the run opens, spec.json kept
    const raise = path.join(root, 'raise.json');
    writeFileSync(raise, JSON.stringify({ budget: { max_wall_minutes: 500 } }));
    const raised = openRun({ resumeDir: out, overridePath: raise, services: 'spawn', config: config() });
    expect(raised.budgetRaised).toBe(true);
    const revisions = JSON.parse(readFileSync(path.join(out, 'budget-revisions.json'), 'utf8')).revisions;
    expect(revisions).toEqual([expect.objectContaining({ number: 1, from: { gpu_hours: 2, max_wall_minutes: 120 }, to: { gpu_hours: 2, max_wall_minutes: 500 }, source: raise, sha256: sha256Hex(readFileSync(raise)) })]);
    expect(JSON.parse(readFileSync(path.join(out, 'spec.json'), 'utf8')).budget.max_wall_minutes).toBe(120);
    writeFileSync(raise, JSON.stringify({ budget: { max_wall_minutes: 200 } }));
    expect(() => openRun({ resumeDir: out, overridePath: raise, services: 'spawn', config: config() })).toThrow(/budget.max_wall_minutes 200 is below the 500 in force; a resumed run's budget can only be raised/);
    expect(() => openRun({ resumeDir: out, backend: 'tinker', services: 'spawn', config: config() })).toThrow(/uses the embedded backend/);
  });

  it('stops a Tinker run without credentials before any work, nothing written', () => {
    const out = path.join(root, 'tinker');
    const err = (() => {
      try {
        openRun({ specPath: EMBEDDED, outDir: out, backend: 'tinker', services: 'spawn', config: config() });
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(RunUserError);
    expect((err as Error).message).toMatch(/--backend tinker needs TINKER_API_KEY and TINKER_BASE_URL.*nothing was started/);
    expect(existsSync(out)).toBe(false);
    // with both, it opens
    expect(openRun({ specPath: EMBEDDED, outDir: out, backend: 'tinker', services: 'spawn', config: config({ TINKER_API_KEY: 'tml-x', TINKER_BASE_URL: 'https://tinker.example' }) }).manifest.backend).toBe('tinker');
  });

  it('reports spec and override mistakes with their JSON paths, and refuses a non-empty directory', () => {
    const bad = path.join(root, 'bad.json');
    writeFileSync(bad, JSON.stringify({ steps: 41 }));
    const err = (() => {
      try {
        openRun({ specPath: EMBEDDED, outDir: path.join(root, 'x'), overridePath: bad, services: 'spawn', config: config() });
      } catch (e) {
        return e as RunUserError;
      }
      return null;
    })();
    expect(err?.message).toMatch(/the spec with this override is invalid/);
    expect(err?.details.join('\n')).toMatch(/feasibility\.effective_config\.steps|dataset\.n_examples/);
    const small = path.join(root, 'small.json');
    writeFileSync(small, JSON.stringify({ steps: 1, dataset: { n_examples: 64 }, feasibility: { effective_config: { steps: 1 } } }));
    expect(() => openRun({ specPath: EMBEDDED, outDir: path.join(root, 'w'), overridePath: small, services: 'spawn', config: config() })).toThrow(/dataset\.n_examples is 64, but the pilot's 2 gs1_kernel steps draw 128 prompts/);
    writeFileSync(path.join(root, 'stray.txt'), 'x');
    expect(() => openRun({ specPath: EMBEDDED, outDir: root, services: 'spawn', config: config() })).toThrow(/not empty and holds no run/);
    expect(() => openRun({ specPath: path.join(root, 'nope.json'), outDir: path.join(root, 'y'), services: 'spawn', config: config() })).toThrow(/cannot read spec .*no such file/);
  });

  it('picks the embedded backend for the embedded model and Tinker otherwise', () => {
    const spec = openRun({ specPath: EMBEDDED, outDir: path.join(root, 'z'), services: 'spawn', config: config() }).spec;
    expect(defaultBackend(spec)).toBe('embedded');
    expect(defaultBackend({ ...spec, base_model: 'Qwen/Qwen3.5-2B' })).toBe('tinker');
  });
});
