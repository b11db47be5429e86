// The published run's own record (transcribed in published-record.fixture.json from
// ../shared/seed/published-record.txt) through this checker: each validator fails with the status the exchange
// gave it, and for the reasons the exchange gave (each of the exchange's issues opens one of ours; ours may say
// more, e.g. that the predictions files the scores name were never shipped).
import published from './published-record.fixture.json';
import { checkRecord } from './check-record';
import type { ExpectedRun, RecordEvidence } from './record-evidence';

describe('the published record, checked here', () => {
  const check = checkRecord(published.record, { files: published.files, expected: published.expected as unknown as ExpectedRun } as RecordEvidence);

  it('parses against the exchange schema', () => {
    expect(check.ok).toBe(true);
  });

  it.each(Object.entries(published.exchange_verdicts))('%s: the status and the reasons the exchange reported', (name, want) => {
    if (!check.ok) throw new Error(check.errors.join('\n'));
    const got = check.verdicts.find((v) => v.validator === name);
    expect(got?.status).toBe(want.status);
    for (const issue of want.issues) {
      const stem = issue.replace(/\.$/, '');
      expect(got?.issues.some((i) => i.startsWith(stem))).toBe(true);
    }
  });

  it('fails the record as a whole, and no validator passes', () => {
    expect(check.ok && check.pass).toBe(false);
    expect(check.ok && check.verdicts.map((v) => v.status)).toEqual(['invalid', 'unverified', 'unverified', 'unknown', 'unverified']);
  });
});
