import { intactRecord } from '@rx/exchange-record/testing';
import { restorationValidation } from './restoration-validation';

const only = (r = intactRecord()) => restorationValidation(r.record, r.evidence());

describe('restoration_validation', () => {
  it('passes on the intact record', () => {
    expect(only()).toEqual({ validator: 'restoration_validation', status: 'passed', issues: [] });
  });

  it("fails when an arm's restore is missing", () => {
    const r = intactRecord();
    delete r.record.initialization_provenance.arms.gs1_kernel;
    expect(only(r)).toEqual({ validator: 'restoration_validation', status: 'unverified', issues: ['gs1_kernel: missing or duplicate arm evidence (no entry for the arm).'] });
    const twice = intactRecord();
    twice.record.initialization_provenance.arms.grpo_gs8.restore_count = 2;
    expect(only(twice).issues.join('\n')).toMatch(/grpo_gs8: missing or duplicate arm evidence \(restore_count 2, not 1; restore_count is not what evidence file/);
  });

  it('fails without an adapter hash, with a failed load, or with another checkpoint loaded', () => {
    const r = intactRecord();
    const i = r.record.initialization_provenance.arms.grpo_gs8.initialization;
    i.adapter_sha256 = null;
    i.load_succeeded = false;
    i.loaded_checkpoint_uri = 'embedded://states/other';
    const msg = only(r).issues.join('\n');
    expect(msg).toMatch(/grpo_gs8: missing or duplicate arm evidence/);
    expect(msg).toMatch(/no adapter_sha256/);
    expect(msg).toMatch(/the load did not succeed/);
    expect(msg).toMatch(/loaded embedded:\/\/states\/other, not embedded:\/\/states\/run-init/);
  });

  it('says in one issue for all arms what is needed when the only gap is the adapter hash the service could not give', () => {
    const r = intactRecord();
    r.record.checkpoints[0].adapter_sha256 = null;
    for (const arm of ['grpo_gs8', 'gs1_kernel'] as const) {
      const i = r.record.initialization_provenance.arms[arm].initialization;
      i.adapter_sha256 = null;
      (i as Record<string, unknown>).note = 'adapter bytes could not be hashed: GET …/archive answered HTTP 404';
      const ref = `exchange/init/${arm}.json`;
      r.texts[ref] = JSON.stringify({ ...(JSON.parse(r.texts[ref]) as object), adapter_sha256: null });
    }
    expect(only(r)).toEqual({
      validator: 'restoration_validation',
      status: 'unverified',
      issues: [
        'grpo_gs8, gs1_kernel: missing or duplicate arm evidence (no adapter_sha256: needs the sha256 of the adapter bytes each arm restored; the record says: adapter bytes could not be hashed: GET …/archive answered HTTP 404).',
      ],
    });
    // without a note, or with another gap besides, each arm keeps its own issue
    delete (r.record.initialization_provenance.arms.gs1_kernel.initialization as Record<string, unknown>).note;
    r.record.initialization_provenance.arms.grpo_gs8.restore_count = 2;
    expect(only(r).issues.filter((x) => x.includes('missing or duplicate')).map((x) => x.split(':')[0])).toEqual(['grpo_gs8', 'gs1_kernel']);
  });

  it("fails when an arm's adapter is not the shared init's", () => {
    const r = intactRecord();
    r.record.checkpoints[0].adapter_sha256 = 'e'.repeat(64);
    expect(only(r).issues).toEqual([
      expect.stringMatching(/^grpo_gs8: missing or duplicate arm evidence \(adapter_sha256 is not the shared init's eeeeeeeeeeee…\)\.$/),
      expect.stringMatching(/^gs1_kernel: missing or duplicate arm evidence \(adapter_sha256 is not the shared init's/),
    ]);
  });

  it('fails when the evidence file is gone, shared between arms, or says otherwise', () => {
    const r = intactRecord();
    delete r.texts['exchange/init/gs1_kernel.json'];
    expect(only(r).issues.join('\n')).toMatch(/gs1_kernel: .*evidence file exchange\/init\/gs1_kernel\.json is not in the run directory/);
    const dup = intactRecord();
    dup.record.initialization_provenance.arms.gs1_kernel.initialization.evidence_ref = 'exchange/init/grpo_gs8.json';
    expect(only(dup).issues.join('\n')).toMatch(/shared with grpo_gs8/);
    const other = intactRecord();
    other.texts['exchange/init/grpo_gs8.json'] = other.texts['exchange/init/grpo_gs8.json'].replace(/"output_sha256":"[0-9a-f]+"/, `"output_sha256":"${'0'.repeat(64)}"`);
    expect(only(other).issues.join('\n')).toMatch(/output_sha256 is not what evidence file exchange\/init\/grpo_gs8\.json says/);
  });

  it('fails when the arms start from different states or the optimizer is not as configured', () => {
    const r = intactRecord();
    const a = r.record.initialization_provenance.arms.gs1_kernel;
    a.initial_output.output_sha256 = 'f'.repeat(64);
    r.texts['exchange/init/gs1_kernel.json'] = r.texts['exchange/init/gs1_kernel.json'].replace(/"output_sha256":"[0-9a-f]+"/, `"output_sha256":"${'f'.repeat(64)}"`);
    expect(only(r).issues).toEqual([expect.stringMatching(/^The arms' initial output sha256 differ/)]);
    const o = intactRecord();
    o.record.initialization_provenance.arms.grpo_gs8.optimizer_checks[0].actual_config = { type: 'adamw', lr: 4e-4 };
    expect(only(o).issues).toEqual(['grpo_gs8: optimizer after restore not as configured: lr 0.0004 (configured 0.00004), beta1 not reported (configured 0.9), beta2 not reported (configured 0.95), eps not reported (configured 1e-8).']);
  });

  describe('outputs that differ within a stated tolerance (a GPU service)', () => {
    const withSameOutput = (sameOutput: Record<string, unknown>, filed: Record<string, unknown> = sameOutput) => {
      const r = intactRecord();
      for (const arm of ['grpo_gs8', 'gs1_kernel'] as const) {
        const ref = `exchange/init/${arm}.json`;
        const output = arm === 'gs1_kernel' ? 'f'.repeat(64) : r.record.initialization_provenance.arms[arm].initial_output.output_sha256;
        Object.assign(r.record.initialization_provenance.arms[arm].initial_output, { output_sha256: output, same_output: sameOutput });
        r.texts[ref] = JSON.stringify({ ...JSON.parse(r.texts[ref]), output_sha256: output, same_output: filed });
      }
      return r;
    };
    const within = { tolerance: { atol: 1e-2, rtol: 0, source: 'rx default' }, max_abs_diff: 1.2e-3, pass: true };

    it('passes when both arms state the tolerance, the measured difference within it, and their evidence files agree', () => {
      expect(only(withSameOutput(within)).issues).toEqual([]);
    });

    it('fails beyond the tolerance, when the pass flag lies about the difference, or when an evidence file says otherwise', () => {
      expect(only(withSameOutput({ ...within, max_abs_diff: 0.05, pass: false })).issues).toEqual([expect.stringMatching(/initial output sha256 differ .*by max \|logprob difference\| 0\.05, beyond the tolerance atol 0\.01 \(rx default\)/)]);
      expect(only(withSameOutput({ ...within, max_abs_diff: 0.05 })).issues).toEqual([expect.stringMatching(/beyond the tolerance atol 0\.01/)]);
      expect(only(withSameOutput(within, { ...within, max_abs_diff: 1e-4 })).issues).toEqual([expect.stringMatching(/the same-output comparison is not what evidence file exchange\/init\/grpo_gs8\.json says/)]);
    });

    it('fails when the record states no tolerance for outputs that differ', () => {
      const r = withSameOutput(within);
      delete (r.record.initialization_provenance.arms.gs1_kernel.initial_output as Record<string, unknown>).same_output;
      expect(only(r).issues).toEqual([expect.stringMatching(/initial output sha256 differ .*no arm states a same-output tolerance/)]);
    });
  });
});
