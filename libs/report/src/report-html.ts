// The report as one self-contained HTML page: the tables in HTML, chart.js's UMD bundle inlined, the chart
// configurations as JSON in the page, and a few lines that draw them. A Content-Security-Policy forbids every
// fetch, so the page works offline and provably loads nothing.
import { BOUND_LABELS } from '@rx/stats';
import type { ChartSpec, SectionId } from './chart-spec';
import { fmt } from './number-format';
import type { ReportModel } from './report-model';

/** drawn charts count on <html data-charts-drawn>; a failure sets data-charts-error and logs a console error */
const PAGE_SCRIPT = `(function () {
  'use strict';
  var root = document.documentElement;
  try {
    var data = JSON.parse(document.getElementById('rx-report-data').textContent);
    if (typeof Chart === 'undefined') throw new Error('chart.js is not loaded');
    Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
    Chart.defaults.color = '#343a40';
    var drawn = 0;
    data.charts.forEach(function (c) {
      var canvas = document.getElementById(c.id);
      if (!canvas) throw new Error('no canvas with id ' + c.id);
      new Chart(canvas, c.config);
      drawn += 1;
    });
    root.setAttribute('data-charts-drawn', String(drawn));
  } catch (err) {
    var message = err && err.message ? err.message : String(err);
    root.setAttribute('data-charts-error', message);
    console.error('rx report: the charts were not drawn: ' + message);
  }
})();`;

const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

const STYLE = `
  :root { color-scheme: light; --ink: #212529; --muted: #6c757d; --line: #dee2e6; }
  * { box-sizing: border-box; }
  body { margin: 0 auto; max-width: 1180px; padding: 24px 28px 48px; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #fff; }
  h1 { font-size: 24px; margin: 0 0 8px; } h2 { font-size: 19px; margin: 0 0 10px; } h3 { font-size: 15px; margin: 14px 0 6px; }
  section { margin: 26px 0 0; padding-top: 14px; border-top: 1px solid var(--line); }
  dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; color: var(--muted); font-size: 13px; }
  dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; word-break: break-all; }
  .verdict { border: 2px solid; border-radius: 8px; padding: 12px 16px; }
  .verdict h2 { margin: 0 0 4px; } .verdict ul { margin: 4px 0 0; padding-left: 20px; } .verdict .src { color: var(--muted); font-size: 12px; }
  .tone-supported { border-color: #2b8a3e; background: #ebfbee; } .tone-refuted { border-color: #c92a2a; background: #fff5f5; }
  .tone-inconclusive { border-color: #e67700; background: #fff9db; } .tone-stopped { border-color: #c92a2a; background: #fff5f5; }
  .tone-unknown { border-color: #adb5bd; background: #f8f9fa; }
  .chart { position: relative; height: 340px; margin: 8px 0; }
  .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); gap: 14px; }
  .grid.two { grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); }
  .grid .chart { height: 280px; border: 1px solid var(--line); border-radius: 6px; padding: 6px; }
  .grid.two .chart { height: 330px; }
  figure { margin: 0; }
  .chart.wide { height: 300px; }
  table { border-collapse: collapse; margin: 6px 0 10px; font-size: 14px; }
  th, td { border: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
  th { background: #f1f3f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
  .pass { color: #2b8a3e; font-weight: 600; } .fail { color: #c92a2a; font-weight: 600; }
  .missing { color: var(--muted); font-style: italic; }
  .notes li { color: #495057; font-size: 13px; }
  table.discordant .completion { color: var(--muted); font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; }
  .caption { color: var(--muted); font-size: 13px; margin: 2px 0 8px; }
  @media print { .chart { break-inside: avoid; } }
`;

export function renderReportHtml(model: ReportModel, chartJsSource: string): string {
  const charts = (section: SectionId, cls = ''): string =>
    model.charts
      .filter((c) => c.section === section)
      .map((c) => canvas(c, cls))
      .join('\n');
  const missing = (key: keyof ReportModel['missing']): string => (model.missing[key] ? `<p class="missing">${esc(model.missing[key] as string)}</p>` : '');
  const data = { charts: model.charts.map((c) => ({ id: c.id, title: c.title, config: c.config, dataColors: c.dataColors })) };

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(`rx report${model.runId ? `: ${model.runId}` : ''}`)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${esc(model.title)}</h1>
<dl class="meta">${model.meta.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>
</header>

<section id="provenance">
<h2>Provenance and configuration</h2>
${model.provenance.datasetNote ? `<p class="stand-in"><strong>${esc(model.provenance.datasetNote)}</strong></p>` : ''}
<dl class="meta">${model.provenance.rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>
</section>

<section id="verdict" class="verdict tone-${model.verdict.tone}">
<h2>Verdict: ${esc(model.verdict.headline)}</h2>
${model.verdict.reasoning.length > 0 ? `<ul>${model.verdict.reasoning.map((r) => `<li>${esc(r)}</li>`).join('')}</ul>` : ''}
${model.verdict.source ? `<div class="src">from ${esc(model.verdict.source)}</div>` : ''}
</section>

<section id="reward">
<h2>Reward, format rate, completion length, dev accuracy and effective neighbours per step, per arm</h2>
${missing('reward')}${charts('reward')}
</section>

<section id="gates">
<h2>Activation gates against their bounds</h2>
${missing('gates')}${gateTable(model)}
<div class="grid">
${charts('gates')}
</div>
</section>

<section id="distributions">
<h2>Advantage and effective-neighbour distributions</h2>
${missing('distributions')}
<div class="grid two">
${charts('distributions')}
</div>
</section>

<section id="paired">
<h2>Paired evaluation: correct and incorrect items</h2>
${missing('paired')}${pairedTable(model)}
</section>

<section id="discordant">
<h2>Discordant items: only one arm right${model.discordant ? ` (${model.discordant.total})` : ''}</h2>
${model.discordant && model.discordant.items.length > 0 ? `<table class="discordant"><thead><tr><th>item</th><th>right</th><th>${esc(model.discordant.treatment)} answered</th><th>${esc(model.discordant.baseline)} answered</th></tr></thead><tbody>${model.discordant.items.map((d) => `<tr><td>${esc(d.itemId)}</td><td>${esc(d.rightArm)}</td><td>${answerCell(d.treatmentAnswer, d.treatmentCompletion)}</td><td>${answerCell(d.baselineAnswer, d.baselineCompletion)}</td></tr>`).join('')}</tbody></table>${model.discordant.total > model.discordant.items.length ? `<p class="missing">the first ${model.discordant.items.length} of ${model.discordant.total}</p>` : ''}` : '<p class="missing">no discordant items (or no eval files for both arms)</p>'}
</section>

<section id="decision">
<h2>Decision: paired Hoeffding rule</h2>
${missing('decision')}${decisionTable(model)}
${charts('decision', 'wide')}
</section>

${model.notes.length > 0 ? `<section id="notes"><h2>Notes on the run directory</h2><ul class="notes">${model.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></section>` : ''}

<script type="application/json" id="rx-report-data">${jsonForScript(data)}</script>
<script>${scriptText(chartJsSource)}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

/** an extracted answer with the start of its completion beneath it */
function answerCell(answer: string, completion: string): string {
  return `<span class="answer">${esc(answer)}</span>${completion ? `<div class="completion">${esc(completion)}</div>` : ''}`;
}

function canvas(c: ChartSpec, cls: string): string {
  const chart = `<div class="chart${cls ? ` ${cls}` : ''}"><canvas id="${esc(c.id)}" role="img" aria-label="${esc(c.title)}"></canvas></div>`;
  return c.caption ? `<figure>${chart}<figcaption class="caption">${esc(c.caption)}</figcaption></figure>` : chart;
}

function gateTable(model: ReportModel): string {
  if (model.gateRows.length === 0) return '';
  const rows = model.gateRows
    .map(
      (r) =>
        `<tr><td>${esc(r.report)}</td><td><code>${esc(r.metric)}</code><div class="caption">${esc(r.measures)}</div></td><td class="num">${esc(r.value)}</td><td>${esc(r.bound)}</td><td class="${r.pass ? 'pass' : 'fail'}">${r.pass ? 'pass' : 'FAIL'}</td></tr>`,
    )
    .join('\n');
  return `<table><thead><tr><th>report</th><th>gate</th><th>value</th><th>needs</th><th></th></tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

function pairedTable(model: ReportModel): string {
  const p = model.paired;
  const base = model.baseAccuracy ? `<p class="caption">base model (shared initial LoRA state): ${pct(model.baseAccuracy.accuracy)} correct of ${model.baseAccuracy.n} items</p>` : '';
  if (!p) return base;
  return `<table class="paired">
<thead><tr><th>${esc(p.n)} paired items</th><th>${esc(p.baseline)} (baseline) correct</th><th>${esc(p.baseline)} (baseline) incorrect</th><th>total</th></tr></thead>
<tbody>
<tr><th>${esc(p.treatment)} (treatment) correct</th><td class="num" id="paired-both">${p.both}</td><td class="num" id="paired-treatment-only">${p.treatmentOnly}</td><td class="num">${p.both + p.treatmentOnly}</td></tr>
<tr><th>${esc(p.treatment)} (treatment) incorrect</th><td class="num" id="paired-baseline-only">${p.baselineOnly}</td><td class="num" id="paired-neither">${p.neither}</td><td class="num">${p.baselineOnly + p.neither}</td></tr>
<tr><th>total</th><td class="num">${p.both + p.baselineOnly}</td><td class="num">${p.treatmentOnly + p.neither}</td><td class="num">${p.n}</td></tr>
</tbody></table>
<p class="caption">accuracy: ${esc(p.treatment)} ${pct(p.treatmentAccuracy)}, ${esc(p.baseline)} ${pct(p.baselineAccuracy)}; the discordant cells (${p.treatmentOnly} treatment-only, ${p.baselineOnly} baseline-only) carry the paired difference.</p>
${base}`;
}

function decisionTable(model: ReportModel): string {
  const d = model.decision;
  if (!d) return '';
  const row = (k: string, v: string) => `<tr><th>${esc(k)}</th><td class="num">${esc(v)}</td></tr>`;
  const rule =
    d.margin !== null ? `supported when the lower bound exceeds the margin: ${fmt(d.lower)} ${d.lower > d.margin ? '>' : '≤'} ${fmt(d.margin)}` : 'no margin recorded';
  return `<table class="decision"><tbody>
${row('bound', `${BOUND_LABELS[d.bound]} (pre-registered: the verdict)`)}
${row('items n', String(d.n))}
${row('effect (mean paired difference)', fmt(d.effect))}
${row('halfwidth', fmt(d.halfwidth))}
${row('interval [lower, upper]', `[${fmt(d.lower)}, ${fmt(d.upper)}]`)}
${row('margin', d.margin !== null ? fmt(d.margin) : 'unknown')}
${d.alpha !== null ? row('alpha', String(d.alpha)) : ''}
${d.winsTreatment !== null ? row('items won by the treatment', String(d.winsTreatment)) : ''}
${d.winsBaseline !== null ? row('items won by the baseline', String(d.winsBaseline)) : ''}
${row('outcome', d.outcome ?? 'unknown')}
</tbody></table>
<p class="caption">${esc(rule)}; from ${esc(d.source)}</p>${exploratoryTable(d)}`;
}

// the bounds the spec did not pre-register, on the same pairs: shown, labelled, never the verdict
function exploratoryTable(d: NonNullable<ReportModel['decision']>): string {
  if (d.exploratory.length === 0) return '';
  const rows = d.exploratory
    .map((e) => `<tr><th>${esc(BOUND_LABELS[e.bound])}</th><td class="num">${esc(fmt(e.halfwidth))}</td><td class="num">${esc(`[${fmt(e.lower)}, ${fmt(e.upper)}]`)}</td><td>${esc(e.outcome)}</td></tr>`)
    .join('\n');
  return `
<table class="decision exploratory"><caption>Other bounds on the same pairs: exploratory, not the pre-registered rule</caption>
<thead><tr><th>bound</th><th>halfwidth</th><th>interval [lower, upper]</th><th>outcome if it were the rule</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

function esc(v: string | number): string {
  return String(v).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** JSON that cannot end its <script> element early */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** JavaScript source that cannot end its <script> element early */
function scriptText(source: string): string {
  return source.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}
