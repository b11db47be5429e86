import { pairedBound } from '@rx/stats';
import { jsonLines, sha256Text } from '../record-evidence';
import { intactRecord } from '@rx/exchange-record/testing';
import { decisionValidation, OBSERVATIONS_NOT_RETAINED } from './decision-validation';

const only = (r = intactRecord()) => decisionValidation(r.record, r.evidence());
const OBS = 'exchange/scored-observations.jsonl';

describe('decision_validation', () => {
  it('passes on the intact record', () => {
    expect(only()).toEqual({ validator: 'decision_validation', status: 'passed', issues: [] });
  });

  it('is unverified when the observation file name/hash is not retained, or the file is gone', () => {
    const r = intactRecord();
    r.record.decision.observations_file = null;
    expect(only(r)).toEqual({ validator: 'decision_validation', status: 'unverified', issues: [OBSERVATIONS_NOT_RETAINED] });
    const gone = intactRecord();
    delete gone.texts[OBS];
    expect(only(gone).issues[0]).toBe(OBSERVATIONS_NOT_RETAINED);
  });

  it('fails when the file changed after its hash was recorded', () => {
    const r = intactRecord();
    r.texts[OBS] = r.texts[OBS].replace('"treatment":0', '"treatment":1');
    expect(only(r).issues[0]).toMatch(/hash to .* not the recorded/);
  });

  it('fails when the observations disagree with the predictions or the verdict_report with the rule', () => {
    const r = intactRecord();
    r.texts[OBS] = r.texts[OBS].replace('"treatment":0', '"treatment":1');
    r.record.decision.observations_file = { name: OBS, sha256: sha256Text(r.texts[OBS]) };
    const v = only(r);
    expect(v.issues.join('\n')).toMatch(/Observations of treatment gs1_kernel differ from its predictions: 1 item/);
    expect(v.issues.join('\n')).toMatch(/verdict_report effect .* differs/);
    const w = intactRecord();
    w.record.verdict_report!.lower += 0.01;
    expect(only(w).issues).toEqual([expect.stringMatching(/^verdict_report lower .* differs from the .* the observations give\.$/)]);
  });

  it('re-derives under the bound the spec pre-registered: an empirical-Bernstein verdict passes only against a spec that chose it', () => {
    const r = intactRecord();
    const lines = jsonLines(r.texts[OBS]) ?? [];
    const eb = pairedBound(
      { itemIds: lines.map((l) => l.item_id as string), treatment: lines.map((l) => l.treatment as number), baseline: lines.map((l) => l.baseline as number) },
      { alpha: 0.05, margin: -0.03, bounds: [0, 1], weights: { treatment: 1, baseline: -1 }, bound: 'empirical_bernstein', orderSeed: 0 },
    );
    r.record.verdict_report = { ...r.record.verdict_report!, lower: eb.lower, upper: eb.upper };
    const ebSpec = () => ({ ...r.evidence(), expected: { ...r.evidence().expected, decision: { ...r.evidence().expected.decision, bound: 'empirical_bernstein' as const } } });
    expect(decisionValidation(r.record, ebSpec()).issues).toEqual([]);
    expect(decisionValidation(r.record, r.evidence()).issues).toEqual([
      expect.stringMatching(/^verdict_report lower .* differs/),
      expect.stringMatching(/^verdict_report upper .* differs/),
    ]);
  });
});
