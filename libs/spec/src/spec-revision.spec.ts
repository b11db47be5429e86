import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSpecText, parseSpec } from './parse-spec';
import { describeRevision, locateSpecPath } from './spec-revision.schema';

const root = resolve(__dirname, '..', '..', '..');
// loose on purpose: the tests edit raw JSON, deep
type Json = Record<string, any>;
const fixture = (): Json => JSON.parse(readFileSync(join(__dirname, 'fixtures', 'small-spec.json'), 'utf8'));

/** the fixture revised: lr 1e-3 -> 3e-3 for both arms, max_tokens 16 -> 24 */
function revised(): Json {
  const s = fixture();
  s.optimizer.lr = 3e-3;
  for (const a of s.arms) a.lr = 3e-3;
  s.feasibility.effective_config.max_tokens = 24;
  s.revision = {
    number: 1,
    revises: 'small-spec.json',
    date: '2026-12-03',
    changes: [
      { path: 'optimizer.lr', from: 1e-3, to: 3e-3 },
      { path: 'arms.gm4.lr', from: 1e-3, to: 3e-3 },
      { path: 'arms.kern1.lr', from: 1e-3, to: 3e-3 },
      { path: 'feasibility.effective_config.max_tokens', from: 16, to: 24 },
    ],
    why: 'the dev sweep',
    evidence: { file: 'tools/sweep/evidence/x.json', sha256: 'a'.repeat(64) },
  };
  return s;
}

function errorsOf(edit: (s: Json) => void): string[] {
  const s = revised();
  edit(s);
  const r = parseSpec(s);
  if (r.ok) throw new Error('expected the edited revision to be rejected');
  return r.errors;
}

describe('a spec revision block', () => {
  it('is accepted when every change says what the spec now holds, and described in one line', () => {
    const r = parseSpec(revised());
    expect(r.ok ? [] : r.errors).toEqual([]);
    if (!r.ok || !r.spec.revision) throw new Error('no revision parsed');
    expect(describeRevision(r.spec.revision)).toBe(
      'revision 1 of small-spec.json (2026-12-03): optimizer.lr 0.001 -> 0.003, arms.gm4.lr 0.001 -> 0.003, arms.kern1.lr 0.001 -> 0.003, feasibility.effective_config.max_tokens 16 -> 24; evidence tools/sweep/evidence/x.json (sha256 aaaaaaaaaaaa)',
    );
  });

  it('finds array elements by name on a path (and nothing where the path names nothing)', () => {
    expect(locateSpecPath(revised(), 'arms.kern1.lr').value).toBe(3e-3);
    expect(locateSpecPath(revised(), 'arms.nope.lr').value).toBeUndefined();
    expect(locateSpecPath(revised(), 'arms.0.name').value).toBe('gm4');
    expect(locateSpecPath(revised(), 'arms.2.name').value).toBeUndefined();
    expect(locateSpecPath(revised(), 'optimizer.lr.x').value).toBeUndefined();
  });

  it.each<[string, (s: Json) => void, string]>([
    ['a change the spec does not hold', (s) => (s.arms[1].lr = 1e-3), 'arms[1].lr: 0.001 differs from optimizer.lr 0.003'],
    ['a `to` that is not the value at its path', (s) => (s.revision.changes[3].to = 32), 'revision.changes[3].to: 32 is not what the spec has at feasibility.effective_config.max_tokens (24)'],
    ['a path naming an element there is not', (s) => (s.revision.changes[1].path = 'arms.grpo.lr'), 'revision.changes[1].path: arms.grpo.lr names nothing in the spec (no element of arms by that name)'],
    ['a changed field the spec lacks, reported where it is missing', (s) => (s.revision.changes[1].path = 'optimizer.learning_rate'), 'optimizer.learning_rate: missing: revision.changes[1] sets optimizer.learning_rate to 0.003'],
    ['a change from a value to itself', (s) => (s.revision.changes[0].from = 3e-3), 'revision.changes[0].to: from and to are the same: not a change'],
    ['no changes', (s) => (s.revision.changes = []), 'revision.changes: must list at least one change'],
    ['a path listed twice', (s) => s.revision.changes.push({ path: 'optimizer.lr', from: 2e-3, to: 3e-3 }), 'revision.changes[4].path: optimizer.lr is listed twice (also changes[0])'],
    ['a short evidence hash', (s) => (s.revision.evidence.sha256 = 'abc'), 'revision.evidence.sha256: must be 64 lower-case hex digits'],
    ['an evidence file outside the repository', (s) => (s.revision.evidence.file = '../shared/x.json'), 'revision.evidence.file: must be a path inside the repository'],
    ['an impossible date', (s) => (s.revision.date = '2026-02-30'), 'revision.date: is not a calendar date'],
    ['a date in another format', (s) => (s.revision.date = '3 Dec 2026'), 'revision.date: must be a date YYYY-MM-DD'],
    ['no reason', (s) => (s.revision.why = ''), 'revision.why: must not be empty'],
    ['an unknown field', (s) => (s.revision.approved = true), 'revision.approved: unknown field'],
    ['a missing evidence block', (s) => delete s.revision.evidence, 'revision.evidence: required field is missing'],
  ])('rejects %s', (_name, edit, expected) => {
    expect(errorsOf(edit)).toContain(expected);
  });
});

describe("specs/embedded.json's revision", () => {
  const r = loadSpecText(readFileSync(join(root, 'specs', 'embedded.json'), 'utf8'));
  if (!r.ok) throw new Error(r.errors.join('; '));
  const revision = r.spec.revision;

  it('names its evidence file by the sha256 of the committed file', () => {
    if (!revision) throw new Error('specs/embedded.json carries no revision');
    const bytes = readFileSync(join(root, revision.evidence.file));
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(revision.evidence.sha256);
  });

  it('changes no estimator, gate or decision setting', () => {
    if (!revision) throw new Error('specs/embedded.json carries no revision');
    const touched = revision.changes.map((c) => c.path.split('.')[0]);
    expect(touched.filter((t) => ['activation_gate', 'decision_rule', 'correctness_preflight', 'batch_size', 'steps', 'lora_rank'].includes(t))).toEqual([]);
    expect(revision.changes.filter((c) => /advantage|group_size|groups_per_batch|seed/.test(c.path))).toEqual([]);
  });
});
