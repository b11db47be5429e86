import { sha256Text } from '../record-evidence';
import { intactRecord } from '@rx/exchange-record/testing';
import { evaluatorIdentity, evaluatorValidation } from './evaluator-validation';

const only = (r = intactRecord()) => evaluatorValidation(r.record, r.evidence());
const dropLine = (text: string, n: number) => text.split('\n').filter((_, i) => i !== n).join('\n');

describe('evaluator_validation', () => {
  it('passes on the intact record', () => {
    expect(only()).toEqual({ validator: 'evaluator_validation', status: 'passed', issues: [] });
  });

  it('fails when a predictions file drops an item (its hash re-derived, and the items compared)', () => {
    const r = intactRecord();
    r.texts['gs1_kernel/eval.jsonl'] = dropLine(r.texts['gs1_kernel/eval.jsonl'], 3);
    const v = only(r);
    expect(v.status).toBe('invalid');
    expect(v.issues.join('\n')).toMatch(/gs1_kernel\/eval\.jsonl: sha256 .* differs from the recorded/);
    // the same drop with the recorded hash updated: the items no longer match the manifest
    const s = r.record.evaluation.scores.find((x) => x.arm === 'gs1_kernel')!;
    s.predictions_sha256 = sha256Text(r.texts['gs1_kernel/eval.jsonl']);
    expect(only(r).issues.join('\n')).toMatch(/does not hold the evaluator's items: 1 item\(s\) missing \(arith-test-3\)/);
  });

  it('fails when the item manifest is altered, missing, or replaced by prose', () => {
    const r = intactRecord();
    r.texts['exchange/items.jsonl'] += '{"item_id":"extra"}\n';
    expect(only(r).issues.join('\n')).toMatch(/item manifest exchange\/items\.jsonl: sha256 .* differs/);
    const [id, e] = Object.entries(intactRecord().record.evaluation.evaluators)[0];
    const prose = intactRecord();
    prose.record.evaluation.evaluators[id] = { ...e, items: { ids: 'arith-test-0 .. arith-test-39' } };
    expect(only(prose).issues).toContain(`Evaluator ${id}: item IDs or a hashed item manifest are required.`);
  });

  it('fails when code_sha256 is prose or the identity is not the provenance hash', () => {
    const r = intactRecord();
    const [id, e] = Object.entries(r.record.evaluation.evaluators)[0];
    r.record.evaluation.evaluators[id] = { ...e, code_sha256: 'sha256 over the evaluator files' };
    const v = only(r);
    expect(v.issues).toContain(`Evaluator ${id}: code_sha256 is required.`);
    expect(v.issues).toContain(`Evaluator ${id}: identity does not match provenance hash.`);
    const t = intactRecord();
    const [tid, te] = Object.entries(t.record.evaluation.evaluators)[0];
    t.record.evaluation.evaluators[tid] = { ...te, decoding: { ...te.decoding, temperature: 1 } };
    expect(only(t).issues).toEqual([`Evaluator ${tid}: identity does not match provenance hash.`]);
    expect(evaluatorIdentity(te)).toBe(tid);
  });

  it('fails when a code file hash changed under the same code_sha256', () => {
    const r = intactRecord();
    const [id, e] = Object.entries(r.record.evaluation.evaluators)[0];
    r.record.evaluation.evaluators[id] = { ...e, code_files: { ...(e.code_files as Record<string, string>), 'libs/grading/src/grade.ts': sha256Text('edited') } };
    expect(only(r).issues).toEqual([`Evaluator ${id}: code_sha256 is not the hash of its code_files.`]);
  });

  it('fails when a score value is not what its predictions give, or an arm has no score', () => {
    const r = intactRecord();
    r.record.evaluation.scores[1].value += 0.025;
    expect(only(r).issues.join('\n')).toMatch(/Score grpo_gs8\/accuracy: value .* differs from the 0\.5 its predictions give/);
    const m = intactRecord();
    m.record.evaluation.scores = m.record.evaluation.scores.filter((s) => s.arm !== 'gs1_kernel');
    expect(only(m).issues).toEqual(['No score for arm gs1_kernel.']);
  });
});
