// The report of a synthetic run, opened from disk in headless Chromium: every chart draws its data (pixels of
// the data's colours inside each plot area), the page logs no error and requests nothing but file:// URLs,
// and a full-page screenshot is kept in tmp/report-checks/ for a person to look at.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildReportModel, chartJsBundle, readRunDir, renderReportHtml, writeReport } from '@rx/report';
import { writeSyntheticRun, type SyntheticRun } from '@rx/report/testing';
import { CANVAS_PROBE, type CanvasProbe } from './canvas-probe';
import { launchHeadlessChromium, type HeadlessChromium } from './headless-chromium';

jest.setTimeout(90_000);

const SCREENSHOT_DIR = path.resolve(__dirname, '../../tmp/report-checks');
/** pixels of a data colour inside a plot area that count as drawn data: a single point of radius 4.5 shows about 55 */
const MIN_DATA_PIXELS = 20;
const CHARTS_SETTLED = "document.documentElement.hasAttribute('data-charts-drawn') || document.documentElement.hasAttribute('data-charts-error')";

describe('the run report in headless Chromium', () => {
  let work: string;
  let browser: HeadlessChromium;
  let run: SyntheticRun;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'rx-report-render-'));
    run = writeSyntheticRun(path.join(work, 'run'), { steps: 8, evalItems: 120 });
    browser = await launchHeadlessChromium();
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(work, { recursive: true, force: true });
  });

  beforeEach(() => {
    browser.errors.length = 0;
    browser.requests.length = 0;
  });

  async function open(file: string) {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    await page.waitForFunction(CHARTS_SETTLED, undefined, { timeout: 20_000 });
    return page;
  }

  it('draws every chart with its data, offline, with no console error', async () => {
    const written = writeReport(run.root);
    const page = await open(written.file);
    const drawn = await page.getAttribute('html', 'data-charts-drawn');
    const failure = await page.getAttribute('html', 'data-charts-error');
    const probes = (await page.evaluate(CANVAS_PROBE)) as CanvasProbe[];
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    const shot = await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'report.png'), fullPage: true });
    await page.close();

    expect(failure).toBeNull();
    expect(browser.errors).toEqual([]);
    expect(browser.requests.length).toBeGreaterThan(0);
    expect(browser.requests.filter((u) => !u.startsWith('file://'))).toEqual([]);

    // reward, format rate, completion length, zero reward spread, length-clipped completions, dev accuracy,
    // effective neighbours per step, six gates, two distributions, the Hoeffding interval
    expect(written.charts).toBe(16);
    expect(drawn).toBe(String(written.charts));
    expect(probes.map((p) => p.id)).toEqual(
      expect.arrayContaining(['chart-reward', 'chart-dev-accuracy', 'chart-neighbors-per-step', 'chart-zero-spread', 'chart-length-clipped', 'chart-advantages', 'chart-neighbors', 'chart-hoeffding', 'chart-gate-0', 'chart-gate-5']),
    );
    for (const p of probes) {
      const where = `${p.id} (${p.width}x${p.height})`;
      expect({ where, hasChart: p.hasChart, differsFromBlank: p.differsFromBlank }).toEqual({ where, hasChart: true, differsFromBlank: true });
      expect(p.width).toBeGreaterThan(300);
      expect(p.painted).toBeGreaterThan(0.01 * p.width * p.height);
      // each data colour shows inside the plot area, not just in the legend
      p.dataColors.forEach((color, k) => expect({ where, color, hits: p.colorHits[k] >= MIN_DATA_PIXELS }).toEqual({ where, color, hits: true }));
    }

    // a PNG of the whole page: IHDR width and height
    expect(shot.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(shot.readUInt32BE(16)).toBe(1280);
    expect(shot.readUInt32BE(20)).toBeGreaterThan(2000);
  });

  it("shows the run's paired 2x2 table, decision and verdict", async () => {
    const { file } = writeReport(run.root);
    const page = await open(file);
    const cell = async (id: string) => Number(await page.textContent(`#${id}`));
    const t = run.eval[run.treatment];
    const b = run.eval[run.baseline];
    let both = 0;
    let treatmentOnly = 0;
    let baselineOnly = 0;
    let neither = 0;
    for (let i = 0; i < t.length; i++) {
      if (t[i] && b[i]) both++;
      else if (t[i]) treatmentOnly++;
      else if (b[i]) baselineOnly++;
      else neither++;
    }
    expect([await cell('paired-both'), await cell('paired-treatment-only'), await cell('paired-baseline-only'), await cell('paired-neither')]).toEqual([both, treatmentOnly, baselineOnly, neither]);
    expect(await page.textContent('#verdict h2')).toBe(`Verdict: ${run.decision?.outcome}`);
    const gates = await page.textContent('#gates table');
    expect(gates).toContain('kernel_effective_neighbors_p10');
    expect(gates).toContain('FAIL');
    await page.close();
    expect(browser.errors).toEqual([]);
  });

  it('shows the provenance block, says arith stands in for GSM8K, and lists the discordant items with both answers', async () => {
    const { file } = writeReport(run.root);
    const page = await open(file);
    const provenance = (await page.textContent('#provenance')) ?? '';
    expect(provenance).toContain('0123456789abcdef0123456789abcdef01234567 (dirty: uncommitted changes)');
    expect(provenance).toContain('e'.repeat(64));
    expect(provenance).toContain('1'.repeat(64));
    expect(provenance).toContain('2'.repeat(64));
    expect(provenance).toMatch(/wall time per phase.*training/);
    expect(provenance).toContain('120 min wall, 0 GPU hours: within budget');
    expect(provenance).toContain('none (the spec as pre-registered)');
    expect(await page.textContent('#provenance .stand-in')).toMatch(/`arith`, which stands in for GSM8K/);
    // the discordant rows: the items exactly one arm got right, counted here from the fixture's eval results
    const t = run.eval[run.treatment];
    const b = run.eval[run.baseline];
    const expected = t.flatMap((c, i) => (c !== b[i] ? [{ item: String(i), right: c ? run.treatment : run.baseline }] : []));
    expect(expected.length).toBeGreaterThan(0);
    type Cell = { textContent: string | null; querySelector(sel: string): Cell | null };
    const rows = await page.$$eval('#discordant tbody tr', (trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => { const c = td as unknown as Cell; return (c.querySelector('.answer') ?? c).textContent ?? ''; })),
    );
    const completions = await page.$$eval('#discordant tbody tr .completion', (cs) => cs.map((c) => (c as unknown as Cell).textContent ?? ''));
    // each answer comes with the start of its completion, which boxes that answer
    expect(completions).toHaveLength(2 * rows.length);
    rows.forEach(([, , tAnswer, bAnswer], i) => expect([completions[2 * i], completions[2 * i + 1]]).toEqual([`... \\boxed{${tAnswer}}`, `... \\boxed{${bAnswer}}`]));
    expect(rows.map(([item, right]) => ({ item, right }))).toEqual(expected.slice(0, 50));
    // both answers: the right arm's is the item id, the other's the fixture's wrong answer 7
    for (const [item, right, tAnswer, bAnswer] of rows) expect(right === run.treatment ? [tAnswer, bAnswer] : [bAnswer, tAnswer]).toEqual([item, '7']);
    // the format-rate and completion-length curves, one per arm, drawn (the first test probes their pixels)
    const titles = await page.$$eval('#reward canvas', (cs) => cs.map((c) => (c as { getAttribute(n: string): string | null }).getAttribute('aria-label') ?? (c as { id: string }).id));
    expect(titles.join('\n')).toMatch(/format/i);
    expect(titles.join('\n')).toMatch(/length/i);
    await page.close();
    expect(browser.errors).toEqual([]);
  });

  it('draws the report of a run with parts missing (no pilot.json, no spec.json: the pilot directories, effective-config.json)', async () => {
    const flat = writeSyntheticRun(path.join(work, 'flat'), { omit: ['spec', 'pilot-summary'], steps: 3, evalItems: 30 });
    const { file, charts } = writeReport(flat.root);
    const page = await open(file);
    const probes = (await page.evaluate(CANVAS_PROBE)) as CanvasProbe[];
    await page.close();
    expect(browser.errors).toEqual([]);
    expect(charts).toBe(16);
    expect(probes.every((p) => p.hasChart && p.differsFromBlank && p.colorHits.every((h) => h >= MIN_DATA_PIXELS))).toBe(true);
  });

  it('draws the report of a run stopped at the gates: pilots and gates, the verdict, the missing parts said', async () => {
    const stopped = writeSyntheticRun(path.join(work, 'stopped'), { scenario: 'stopped' });
    const { file, charts } = writeReport(stopped.root);
    const page = await open(file);
    const probes = (await page.evaluate(CANVAS_PROBE)) as CanvasProbe[];
    const verdict = await page.textContent('#verdict');
    const decision = await page.textContent('#decision');
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'report-stopped.png'), fullPage: true });
    await page.close();
    expect(browser.errors).toEqual([]);
    expect(charts).toBe(9);
    expect(probes.map((p) => [p.id, p.hasChart && p.differsFromBlank && p.colorHits.every((h) => h >= MIN_DATA_PIXELS)])).toEqual(probes.map((p) => [p.id, true]));
    expect(verdict).toMatch(/Verdict: stopped[\s\S]*activation gate failed at bandwidth 1\.0/);
    expect(decision).toContain('no decision in this run (decision-summary.json)');
  });

  it('sees it when the charts do not draw (chart.js left out)', async () => {
    const model = buildReportModel(readRunDir(run.root));
    const file = path.join(work, 'broken.html');
    writeFileSync(file, renderReportHtml(model, ''));
    const page = await open(file);
    const failure = await page.getAttribute('html', 'data-charts-error');
    const probes = (await page.evaluate(CANVAS_PROBE)) as CanvasProbe[];
    await page.close();
    expect(failure).toBe('chart.js is not loaded');
    expect(browser.errors).toEqual(['rx report: the charts were not drawn: chart.js is not loaded']);
    expect(probes).toHaveLength(model.charts.length);
    for (const p of probes) expect([p.hasChart, p.painted, p.differsFromBlank, ...p.colorHits]).toEqual([false, 0, false, ...p.colorHits.map(() => 0)]);
  });

  it('the page inlines chart.js and needs nothing from outside', () => {
    const { file } = writeReport(run.root);
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('Chart.js v4');
    expect(html).toMatch(/Content-Security-Policy" content="default-src &#39;none&#39;/);
    // chart.js is inlined as shipped; the rest of the page references no script, stylesheet or URL at all
    const bundle = chartJsBundle();
    expect(html).toContain(bundle);
    const rest = html.replace(bundle, '');
    expect([...rest.matchAll(/<script[^>]+src=|<link[^>]+href=|https?:\/\/[^\s"'<>)]+/g)].map((m) => m[0])).toEqual([]);
  });
});
