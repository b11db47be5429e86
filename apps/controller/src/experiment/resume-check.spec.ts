// A resumed run is the run it claims to be: an edited spec.json, an effective configuration of another spec, or
// changed code is refused in one line naming what changed; --accept-changes lets it through, and says what.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseControllerConfig } from '../config';
import { REPO_ROOT } from '../infra/repo-root';
import { codeRelevantSha256, checkSameRun, failedRunLine } from './resume-check';
import { openRun } from './open-run';
import { RunUserError } from '../composition/run-options';

const EMBEDDED = path.join(REPO_ROOT, 'specs', 'embedded.json');

describe('resuming the same run', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(path.join(tmpdir(), 'rx-resume-check-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const started = (code = 'code-a') => {
    const out = path.join(root, 'run');
    const run = openRun({ specPath: EMBEDDED, outDir: out, services: 'spawn', config: parseControllerConfig({}) });
    run.state.beginAttempt(false, 'tree', [], code);
    run.state.endAttempt('interrupted', 'killed');
    return out;
  };
  const resumed = (out: string) => openRun({ resumeDir: out, services: 'spawn', config: parseControllerConfig({}) });
  const check = (out: string, code: string, accept = false) => {
    const r = resumed(out);
    return checkSameRun(r.dir, r.manifest, r.spec, r.state.state, code, accept);
  };

  it('lets the unchanged run resume', () => {
    const out = started();
    expect(check(out, 'code-a')).toEqual([]);
  });

  it('refuses a spec.json edited in the run directory (still a valid spec) in one line naming it', () => {
    const out = started();
    const file = path.join(out, 'spec.json');
    const spec = JSON.parse(readFileSync(file, 'utf8'));
    spec.title = `${spec.title} (edited)`;
    writeFileSync(file, JSON.stringify(spec, null, 2));
    let err: unknown;
    try {
      check(out, 'code-a');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RunUserError);
    expect((err as Error).message).not.toContain('\n');
    expect((err as Error).message).toMatch(/is not the run it was: spec\.json was edited .*--accept-changes/);
    // accepted: the change comes back, to be recorded as the attempt's revision
    expect(check(out, 'code-a', true)).toEqual([expect.stringMatching(/^spec\.json was edited/)]);
  });

  it('refuses changed code, and an effective configuration of another spec', () => {
    const out = started();
    expect(() => check(out, 'code-b')).toThrow(/the code changed \(sha256 code-b/);
    writeFileSync(
      path.join(out, 'effective-config.json'),
      JSON.stringify({
        run_id: resumed(out).manifest.runId,
        spec_sha256: 'f'.repeat(64),
        title: 't',
        base_model: 'm',
        lora_rank: 1,
        steps: 1,
        batch_size: 1,
        max_seq_len: 1,
        arms: [{ name: 'a', advantage: 'x' }],
        sampling: { maxTokens: 1 },
        data: { dataset: { name: 'd' }, n_train: 1, n_test: 1 },
        backend: 'embedded',
        services: 'spawn',
      }),
    );
    expect(() => check(out, 'code-a')).toThrow(/effective-config\.json names another spec/);
  });

  it('hashes only what decides the results: a test or a doc changes nothing, a source file does', () => {
    const files = { 'libs/a/src/x.ts': '1', 'libs/a/src/x.spec.ts': '2', 'apps/b/src/main.ts': '3', 'docs/d.md': '4', 'tools/chaos/c.ts': '5' };
    const base = codeRelevantSha256(files);
    expect(codeRelevantSha256({ ...files, 'libs/a/src/x.spec.ts': 'changed', 'docs/d.md': 'changed', 'tools/chaos/c.ts': 'changed' })).toBe(base);
    expect(codeRelevantSha256({ ...files, 'libs/a/src/x.ts': 'changed' })).not.toBe(base);
    expect(codeRelevantSha256({ ...files, 'apps/b/src/main.ts': 'changed' })).not.toBe(base);
  });

  it('says what failed and what runs again for a run recorded failed', () => {
    const out = started();
    const r = resumed(out);
    r.state.update((s) => {
      s.status = 'failed';
      s.reason = 'step 1 of x.t1/grpo was refused by the pipeline: no training state';
      s.arms.grpo = { attempt: 1, runId: 'x.t1', stepsDone: 1, done: false };
    });
    expect(failedRunLine(r.state.state, 'training')).toBe(
      'the last attempt failed: step 1 of x.t1/grpo was refused by the pipeline: no training state; training runs again (grpo from step 1); the phases done are kept',
    );
    r.state.update((s) => void (s.status = 'interrupted'));
    expect(failedRunLine(r.state.state, 'training')).toBeNull();
  });
});
