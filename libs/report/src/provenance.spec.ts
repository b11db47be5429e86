// The provenance block and the discordant items, read through the run-directory contract from a synthetic run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeSyntheticRun } from '@rx/report/testing';
import { discordantItems, readProvenance } from './provenance';

describe('provenance', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-report-provenance-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("reads the record's commit, hashes and budget and the spec's dataset", () => {
    const fx = writeSyntheticRun(path.join(work, 'run'), { steps: 2, evalItems: 10 });
    const p = readProvenance(fx.root);
    expect(Object.fromEntries(p.rows)).toMatchObject({
      commit: '0123456789abcdef0123456789abcdef01234567 (dirty: uncommitted changes)',
      'spec sha256': 'e'.repeat(64),
      'spec revision': 'none (the spec as pre-registered)',
      budget: '120 min wall, 0 GPU hours: within budget',
      dataset: 'arith',
    });
    expect(p.datasetNote).toMatch(/`arith`, which stands in for GSM8K/);
  });

  it("names the spec's own recorded revision (specs/embedded.json's), not 'none'", () => {
    const fx = writeSyntheticRun(path.join(work, 'revised'), { steps: 2, evalItems: 10 });
    const revision = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'specs', 'embedded.json'), 'utf8')).revision;
    const file = path.join(fx.root, 'record.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), revision }));
    const row = Object.fromEntries(readProvenance(fx.root).rows)['spec revision'];
    expect(row.startsWith(`revision ${revision.number} of ${revision.revises} (${revision.date}): `)).toBe(true);
    expect(row).toContain(`evidence ${revision.evidence.file} (sha256 ${revision.evidence.sha256.slice(0, 12)}): ${revision.why}`);
  });

  it('says the commit is unknown when record.json does not read back', () => {
    const fx = writeSyntheticRun(path.join(work, 'damaged'), { steps: 2, evalItems: 10 });
    writeFileSync(path.join(fx.root, 'record.json'), '{"version": 1}');
    expect(readProvenance(fx.root).rows[0]).toEqual(['commit', 'unknown (no git revision recorded)']);
  });

  it('lists the items exactly one arm got right, with both answers', () => {
    const fx = writeSyntheticRun(path.join(work, 'items'), { steps: 2, evalItems: 40 });
    const { items, total } = discordantItems(fx.root, fx.treatment, fx.baseline);
    const expected = fx.eval[fx.treatment].flatMap((t, i) => (t === fx.eval[fx.baseline][i] ? [] : [{ itemId: String(i), rightArm: t ? fx.treatment : fx.baseline }]));
    expect(expected.length).toBeGreaterThan(0);
    expect([total, items.map((x) => ({ itemId: x.itemId, rightArm: x.rightArm }))]).toEqual([expected.length, expected]);
    for (const x of items) expect(x.rightArm === fx.treatment ? [x.treatmentAnswer, x.baselineAnswer] : [x.baselineAnswer, x.treatmentAnswer]).toEqual([x.itemId, '7']);
  });
});
