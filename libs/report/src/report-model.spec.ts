// buildReportModel and renderReportHtml on synthetic runs: what each chart and table holds.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { renderReportHtml } from './report-html';
import { COLORS, type ChartSpec } from './chart-spec';
import { buildReportModel, type ReportModel } from './report-model';
import { readRunDir } from './run-data';
import { writeSyntheticRun, type SyntheticRun } from '@rx/report/testing';
import type { StepRecord } from '@rx/contracts';

type Dataset = { label: string; data: unknown[]; type?: string; pointBackgroundColor?: string[] };
const datasets = (c: ChartSpec | undefined): Dataset[] => (c?.config.data.datasets ?? []) as unknown as Dataset[];
const chart = (m: ReportModel, id: string) => m.charts.find((c) => c.id === id);

describe('buildReportModel', () => {
  let work: string;
  let fx: SyntheticRun;
  let model: ReportModel;

  beforeAll(() => {
    work = mkdtempSync(path.join(tmpdir(), 'rx-report-model-'));
    fx = writeSyntheticRun(path.join(work, 'run'), { steps: 4, evalItems: 90 });
    model = buildReportModel(readRunDir(fx.root), '2025-01-02T00:00:00.000Z');
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('draws the reward per step of each arm, training solid and the pilots dashed', () => {
    const reward = chart(model, 'chart-reward');
    const byLabel = new Map(datasets(reward).map((d) => [d.label, d]));
    for (const arm of [fx.treatment, fx.baseline]) {
      const expected = fx.training[arm].map((r) => {
        let s = 0;
        for (const x of r.rollouts) s += x.reward;
        return { x: r.step, y: s / r.rollouts.length };
      });
      expect(byLabel.get(`${arm} (training)`)?.data).toEqual(expected);
    }
    expect([...byLabel.keys()]).toEqual([
      `${fx.baseline} (training)`,
      `${fx.treatment} (training)`,
      `${fx.baseline} (pilot bw0.5, failed ess)`,
      `${fx.treatment} (pilot bw0.5, failed ess)`,
      `${fx.treatment} (pilot bw1.0)`,
    ]);
    expect(datasets(reward).map((d) => (d as unknown as { borderDash: number[] }).borderDash.length > 0)).toEqual([false, false, true, true, true]);
    // each arm's training in its colour, its pilots in the next shades
    expect(reward?.dataColors).toEqual([COLORS.baseline, COLORS.treatment, COLORS.baselineShades[1], COLORS.treatmentShades[1], COLORS.treatmentShades[2]]);
  });

  it('draws each gate of each pilot against its bound, failures in red', () => {
    const gates = model.charts.filter((c) => c.section === 'gates');
    expect(gates.map((c) => c.title)).toEqual(fx.gateReports[0].report.results.map((r) => r.metric));
    const ess = gates.find((c) => c.title === 'kernel_effective_neighbors_p10') as ChartSpec;
    const [band, points] = datasets(ess);
    const scale = (ess.config.options as { scales: { y: { min: number; max: number } } }).scales.y;
    const values = fx.gateReports.map((g) => g.report.results.find((r) => r.metric === 'kernel_effective_neighbors_p10')?.value as number);
    // ">= 8": the allowed region runs from 8 to the top of the axis, which holds every value and the bound
    expect(band.data).toEqual([[8, scale.max], [8, scale.max]]);
    expect(scale.min).toBeLessThanOrEqual(Math.min(...values, 8));
    expect(scale.max).toBeGreaterThanOrEqual(Math.max(...values, 8));
    expect(points.data).toEqual([{ x: 'pilot bw0.5 (failed)', y: values[0] }, { x: 'pilot bw1.0', y: values[1] }]);
    expect(points.pointBackgroundColor).toEqual([COLORS.fail, COLORS.pass]);
    // a one-sided bound is also drawn as a dashed threshold line at 8; a two-sided one ([0.1, 0.9]) has none
    const threshold = datasets(ess)[2] as unknown as { label: string; data: unknown; borderDash: number[] };
    expect([threshold.label, threshold.data, threshold.borderDash.length > 0]).toEqual(['threshold (>= 8)', [{ x: 'pilot bw0.5 (failed)', y: 8 }, { x: 'pilot bw1.0', y: 8 }], true]);
    expect(datasets(gates.find((c) => c.title === 'pilot_mean_reward')).map((d) => (d as { label?: string }).label)).not.toContainEqual(expect.stringMatching(/^threshold/));
    // "in {1}": a narrow band around the allowed value
    const size = datasets(gates.find((c) => c.title === 'executed_group_size_treatment'));
    const [lo, hi] = size[0].data[0] as [number, number];
    expect(lo < 1 && hi > 1 && hi - lo < 0.2).toBe(true);
    // "in [0.1, 0.9]"
    expect(datasets(gates.find((c) => c.title === 'pilot_mean_reward'))[0].data).toEqual([[0.1, 0.9], [0.1, 0.9]]);
    expect(model.gateRows.filter((r) => !r.pass).map((r) => [r.report, r.metric])).toEqual([['pilot bw0.5 (failed)', 'kernel_effective_neighbors_p10']]);
  });

  it('draws the advantage and effective-neighbour distributions over all training rollouts', () => {
    const adv = chart(model, 'chart-advantages');
    const all = [fx.treatment, fx.baseline].map((arm) => fx.training[arm].flatMap((r) => r.rollouts.map((x) => x.advantage)));
    const fractions = datasets(adv).map((d) => d.data as number[]);
    expect(datasets(adv).map((d) => d.label)).toEqual([`${fx.baseline} (${all[1].length} rollouts)`, `${fx.treatment} (${all[0].length} rollouts)`]);
    for (const f of fractions) expect(f.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12);
    expect(fractions[0]).toHaveLength(30);
    // the group mean's n_eff is 7 for every rollout: said in words, the kernel arm's distribution drawn
    const ness = chart(model, 'chart-neighbors');
    expect(datasets(ness).map((d) => d.label)).toEqual([`${fx.treatment} (${all[0].length} rollouts)`]);
    expect(ness?.caption).toBe(`${fx.baseline}: all ${all[1].length} rollouts at 7`);
  });

  it('draws each arm\'s dev accuracy every 10 updates from its training.json', () => {
    const dev = chart(model, 'chart-dev-accuracy');
    expect(dev?.section).toBe('reward');
    const byLabel = new Map(datasets(dev).map((d) => [d.label, d.data]));
    for (const arm of [fx.treatment, fx.baseline]) {
      const written = JSON.parse(readFileSync(path.join(fx.root, arm, 'training.json'), 'utf8')) as { dev_accuracy: Array<{ updates: number; accuracy: number }> };
      expect(byLabel.get(`${arm} (128 dev items)`)).toEqual(written.dev_accuracy.map((p) => ({ x: p.updates, y: p.accuracy })));
    }
    expect(byLabel.get(`${fx.treatment} (128 dev items)`)).toEqual([{ x: 0, y: 38 / 128 }, { x: 4, y: 44 / 128 }]);
  });

  it('draws the p10 and median of the effective neighbours of every training step, per arm', () => {
    const ness = chart(model, 'chart-neighbors-per-step');
    const byLabel = new Map(datasets(ness).map((d) => [d.label, d.data]));
    for (const arm of [fx.treatment, fx.baseline]) {
      // the trainer's own per-step p10 and p50, as the step log has them
      expect(byLabel.get(`${arm} p10`)).toEqual(fx.training[arm].map((r) => ({ x: r.step, y: r.gate.effectiveNeighbors.p10 })));
      expect(byLabel.get(`${arm} median`)).toEqual(fx.training[arm].map((r) => ({ x: r.step, y: r.gate.effectiveNeighbors.p50 })));
    }
    expect(byLabel.get(`${fx.baseline} p10`)).toEqual(fx.training[fx.baseline].map((r) => ({ x: r.step, y: 7 })));
  });

  it('draws the zero-spread and the length-clipped fractions per arm and step, counted here from the step records', () => {
    type Point = { x: number; y: number };
    const zero = new Map(datasets(chart(model, 'chart-zero-spread')).map((d) => [d.label, d.data as Point[]]));
    const clipped = new Map(datasets(chart(model, 'chart-length-clipped')).map((d) => [d.label, d.data as Point[]]));
    // GS1: rollouts whose kernel baseline equals their reward within 1e-12
    expect(zero.get(fx.treatment)).toEqual(fx.training[fx.treatment].map((r) => ({ x: r.step, y: r.rollouts.filter((x) => Math.abs(x.baseline - x.reward) < 1e-12).length / r.rollouts.length })));
    // GRPO: prompts whose 8 rewards are all equal
    const flatGroups = (r: StepRecord) => {
      const byPrompt = new Map<string, number[]>();
      for (const x of r.rollouts) byPrompt.set(x.promptId, [...(byPrompt.get(x.promptId) ?? []), x.reward]);
      return [...byPrompt.values()].filter((rs) => rs.every((v) => v === rs[0])).length / byPrompt.size;
    };
    expect(zero.get(fx.baseline)).toEqual(fx.training[fx.baseline].map((r) => ({ x: r.step, y: flatGroups(r) })));
    expect(zero.get(fx.baseline)!.some((p) => p.y > 0)).toBe(true);
    for (const arm of [fx.treatment, fx.baseline]) {
      expect(clipped.get(arm)).toEqual(fx.training[arm].map((r) => ({ x: r.step, y: r.rollouts.filter((x) => x.stopReason === 'length').length / r.rollouts.length })));
    }
    expect([...clipped.values()].flat().some((p) => p.y > 0)).toBe(true);
  });

  it('leaves both out for a run whose metrics.jsonl predates them', () => {
    const old = writeSyntheticRun(path.join(work, 'old-metrics'), { steps: 3, evalItems: 20 });
    for (const arm of [old.treatment, old.baseline]) {
      const file = path.join(old.root, arm, 'metrics.jsonl');
      const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      writeFileSync(file, lines.map((l) => JSON.stringify(Object.fromEntries(Object.entries(l).filter(([k]) => k !== 'rx/frac_reward_zero_std' && k !== 'rx/completions/clipped_ratio')))).join('\n') + '\n');
    }
    const m = buildReportModel(readRunDir(old.root));
    expect([chart(m, 'chart-zero-spread'), chart(m, 'chart-length-clipped')]).toEqual([undefined, undefined]);
    expect(chart(m, 'chart-format-rate')).toBeDefined();
  });

  it('leaves the dev accuracy out for a run whose training.json has none', () => {
    const work2 = path.join(work, 'no-dev');
    const old = writeSyntheticRun(work2, { steps: 3, evalItems: 20 });
    for (const arm of [old.treatment, old.baseline]) {
      const file = path.join(old.root, arm, 'training.json');
      const t = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      delete t.dev_accuracy;
      writeFileSync(file, JSON.stringify(t));
    }
    expect(chart(buildReportModel(readRunDir(old.root)), 'chart-dev-accuracy')).toBeUndefined();
  });

  it('counts the paired 2x2 table from the two arms\' eval files', () => {
    const t = fx.eval[fx.treatment];
    const b = fx.eval[fx.baseline];
    const cells = { both: 0, treatmentOnly: 0, baselineOnly: 0, neither: 0 };
    for (let i = 0; i < t.length; i++) {
      if (t[i] && b[i]) cells.both++;
      else if (t[i]) cells.treatmentOnly++;
      else if (b[i]) cells.baselineOnly++;
      else cells.neither++;
    }
    expect(model.paired).toEqual({
      treatment: fx.treatment,
      baseline: fx.baseline,
      n: 90,
      ...cells,
      treatmentAccuracy: t.filter(Boolean).length / 90,
      baselineAccuracy: b.filter(Boolean).length / 90,
    });
    expect(model.baseAccuracy).toEqual({ n: 90, accuracy: fx.eval.base.filter(Boolean).length / 90 });
    // the decision's wins are the discordant cells
    expect([fx.decision?.wins_treatment, fx.decision?.wins_baseline]).toEqual([cells.treatmentOnly, cells.baselineOnly]);
    expect(model.notes).toEqual([]);
  });

  it('draws the Hoeffding interval, the effect and the margin, and states the verdict', () => {
    const h = datasets(chart(model, 'chart-hoeffding'));
    const d = fx.decision;
    expect(h[0].data).toEqual([{ x: d?.lower, y: 0 }, { x: d?.upper, y: 0 }]);
    expect(h[1].data).toEqual([{ x: d?.effect, y: 0 }]);
    expect(h[3].data).toEqual([{ x: -0.03, y: -1 }, { x: -0.03, y: 1 }]);
    expect(h[3].label).toMatch(/^margin = -0\.03/);
    expect(model.verdict).toMatchObject({ headline: d?.outcome, tone: d?.outcome, source: 'record.json' });
    expect(model.charts.map((c) => c.id)).toEqual(['chart-reward', 'chart-dev-accuracy', 'chart-neighbors-per-step', 'chart-format-rate', 'chart-completion-length', 'chart-zero-spread', 'chart-length-clipped', ...[0, 1, 2, 3, 4, 5].map((i) => `chart-gate-${i}`), 'chart-advantages', 'chart-neighbors', 'chart-hoeffding']);
  });

  it('notes a decision that disagrees with the eval files', () => {
    const other = writeSyntheticRun(path.join(work, 'tampered'), { steps: 2, evalItems: 50 });
    const file = path.join(other.root, 'decision-summary.json');
    const summary = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...summary, n: 49, wins_treatment: summary.wins_treatment + 1 }));
    const m = buildReportModel(readRunDir(other.root));
    expect(m.notes).toEqual([`the decision counts n = 49 items, the eval files pair 50`, `the decision counts ${summary.wins_treatment + 1} treatment wins, the eval files ${summary.wins_treatment}`]);
  });


  it('shows the pre-registered bound as the verdict and the other bounds beside it, labelled exploratory', () => {
    const other = writeSyntheticRun(path.join(work, 'bounds'), { steps: 2, evalItems: 50 });
    const file = path.join(other.root, 'decision-summary.json');
    const summary = JSON.parse(readFileSync(file, 'utf8'));
    const eb = { bound: 'empirical_bernstein', n: summary.n, effect: summary.effect, halfwidth: 0.04646, lower: -0.01613, upper: 0.07679, wins_treatment: summary.wins_treatment, wins_baseline: summary.wins_baseline, supported: true, outcome: 'supported' };
    writeFileSync(file, JSON.stringify({ ...summary, rule: { ...summary.rule, bound: 'hoeffding' }, exploratory: [eb] }));
    const m = buildReportModel(readRunDir(other.root));
    expect(m.decision).toMatchObject({ bound: 'hoeffding', exploratory: [{ bound: 'empirical_bernstein', halfwidth: 0.04646, lower: -0.01613, upper: 0.07679, outcome: 'supported' }] });
    const html = renderReportHtml(m, '');
    expect(html).toContain('<tr><th>bound</th><td class="num">paired Hoeffding (pre-registered: the verdict)</td></tr>');
    expect(html).toContain('<caption>Other bounds on the same pairs: exploratory, not the pre-registered rule</caption>');
    expect(html).toContain('<tr><th>empirical Bernstein</th><td class="num">0.0465</td><td class="num">[-0.0161, 0.0768]</td><td>supported</td></tr>');
    // a run written before bounds were selectable: Hoeffding, no exploratory table
    expect(renderReportHtml(buildReportModel(readRunDir(fx.root)), '')).not.toContain('exploratory, not the pre-registered rule');
  });
  it('shows a run stopped at the gates: the pilots and gates drawn, no table or interval, the verdict stopped', () => {
    const stopped = buildReportModel(readRunDir(writeSyntheticRun(path.join(work, 'stopped'), { scenario: 'stopped' }).root));
    expect(stopped.verdict.tone).toBe('stopped');
    expect(stopped.verdict.headline).toBe('stopped');
    expect(stopped.charts.map((c) => c.id)).toEqual(['chart-reward', ...[0, 1, 2, 3, 4, 5].map((i) => `chart-gate-${i}`), 'chart-advantages', 'chart-neighbors']);
    expect(stopped.paired).toBeNull();
    expect(stopped.missing).toEqual({ paired: 'needs gs1_kernel/eval.jsonl and grpo_gs8/eval.jsonl', decision: 'no decision in this run (decision-summary.json)' });
  });
});

describe('renderReportHtml', () => {
  it('escapes text and keeps the data script closed whatever the labels hold', () => {
    const work = mkdtempSync(path.join(tmpdir(), 'rx-report-html-'));
    try {
      const m = buildReportModel(readRunDir(writeSyntheticRun(path.join(work, 'run'), { steps: 2, evalItems: 10 }).root));
      const hostile = '</script><script>alert(1)</script> & "quotes"';
      m.title = hostile;
      (m.charts[0].config.data.datasets[0] as { label: string }).label = hostile;
      const html = renderReportHtml(m, 'window.Chart = function () {};');
      expect(html).toContain('<h1>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;</h1>');
      expect(html).not.toContain('<script>alert(1)');
      const data = /<script type="application\/json" id="rx-report-data">([\s\S]*?)<\/script>/.exec(html)?.[1] as string;
      const parsed = JSON.parse(data) as { charts: Array<{ id: string; config: { data: { datasets: Array<{ label: string }> } } }> };
      expect(parsed.charts.map((c) => c.id)).toEqual(m.charts.map((c) => c.id));
      expect(parsed.charts[0].config.data.datasets[0].label).toBe(hostile);
      expect(renderReportHtml(m, 'var s = "</script>";')).toContain('<script>var s = "<\\/script>";</script>');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
