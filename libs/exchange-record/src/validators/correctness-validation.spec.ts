import { intactRecord } from '@rx/exchange-record/testing';
import { correctnessValidation } from './correctness-validation';

const only = (r = intactRecord()) => correctnessValidation(r.record, r.evidence());
const REF = 'exchange/files/libs/preflight/src/importance-sampling.reference.ts';

describe('correctness_validation', () => {
  it('passes on the intact record', () => {
    expect(only()).toEqual({ validator: 'correctness_validation', status: 'passed', issues: [] });
  });

  it('is unverified when a revision is not pinned in a checkable form', () => {
    const r = intactRecord();
    const p = r.record.correctness_preflight.paths[0];
    p.baseline_revision = 'tinker-cookbook 11885f569f96d40186659802b0f8c938938bc564 (rl/data_processing.py)';
    p.reference_revision = 'UNRESOLVED: pin a reference';
    const v = only(r);
    expect(v.status).toBe('unverified');
    expect(v.issues).toHaveLength(2);
    expect(v.issues[0]).toMatch(/^gs1_kernel_advantage_loop: matching baseline_revision required: .* is not pinned in a checkable form/);
    expect(v.issues[1]).toMatch(/^gs1_kernel_advantage_loop: matching reference_revision required: 'UNRESOLVED.* is not pinned in a checkable form/);
  });

  it('is unverified when a pinned file changed or is absent', () => {
    const r = intactRecord();
    r.texts[REF] += '// edited\n';
    expect(only(r).issues).toEqual([expect.stringMatching(/matching reference_revision required: it pins .*importance-sampling\.reference\.ts at .*, the file hashes to/)]);
    const gone = intactRecord();
    delete gone.texts['exchange/files/libs/estimators/src/kernel-baseline.ts'];
    expect(only(gone).issues).toEqual([expect.stringMatching(/matching implementation_revision required: .*kernel-baseline\.ts is not in the record's files/)]);
  });

  it('requires the revision the spec pins, and the errors within the tolerances', () => {
    const r = intactRecord();
    r.evidence = ((base) => () => {
      const e = base();
      e.expected.correctness.paths[0].reference_revision = 'reference.py sha256 ' + 'a'.repeat(64);
      return e;
    })(r.evidence);
    expect(only(r).issues).toEqual([`gs1_kernel_advantage_loop: matching reference_revision required: the spec pins 'reference.py sha256 ${'a'.repeat(64)}'`]);
    const t = intactRecord();
    t.record.correctness_preflight.paths[0].errors.reference_gradient.cosine_similarity = 0.999;
    t.record.correctness_preflight.paths[0].errors.baseline_loss.max_abs_error = 2e-4; // > 1e-6 + 1e-5 * 10
    expect(only(t).issues).toEqual([
      expect.stringMatching(/baseline_loss max_abs_error 0\.0002 exceeds atol/),
      expect.stringMatching(/reference_gradient cosine 0\.999 below 0\.99999/),
    ]);
    const none = intactRecord();
    none.record.correctness_preflight.paths = [];
    expect(only(none).issues).toEqual(['gs1_kernel_advantage_loop: not in the record']);
  });
});
