// The chart of the page's decision section: the paired Hoeffding interval against zero and the margin.
import type { ChartConfiguration } from 'chart.js';
import { baseOptions, COLORS, paddedRange, type ChartSpec } from './chart-spec';
import { fmt } from './number-format';
import type { DecisionNumbers } from './run-data';

export function hoeffdingChart(d: DecisionNumbers): ChartSpec {
  const alpha = d.alpha !== null ? `, α = ${d.alpha} each side` : '';
  const datasets: ChartConfiguration<'scatter'>['data']['datasets'] = [
    {
      label: `Hoeffding interval [${fmt(d.lower)}, ${fmt(d.upper)}] = effect ± ${fmt(d.halfwidth)}${alpha}`,
      data: [{ x: d.lower, y: 0 }, { x: d.upper, y: 0 }],
      showLine: true,
      borderColor: COLORS.pass,
      backgroundColor: COLORS.pass,
      borderWidth: 8,
      pointRadius: 6,
      pointStyle: 'line',
    },
    {
      label: `effect (mean paired difference) = ${fmt(d.effect)}`,
      data: [{ x: d.effect, y: 0 }],
      borderColor: COLORS.effect,
      backgroundColor: COLORS.effect,
      pointRadius: 9,
      pointStyle: 'rectRot',
    },
    {
      label: 'no difference (0)',
      data: [{ x: 0, y: -1 }, { x: 0, y: 1 }],
      showLine: true,
      borderColor: COLORS.zero,
      backgroundColor: COLORS.zero,
      borderWidth: 1.5,
      borderDash: [2, 3],
      pointRadius: 0,
    },
  ];
  if (d.margin !== null) {
    datasets.push({
      label: `margin = ${fmt(d.margin)} (supported when the lower bound exceeds it)`,
      data: [{ x: d.margin, y: -1 }, { x: d.margin, y: 1 }],
      showLine: true,
      borderColor: COLORS.margin,
      backgroundColor: COLORS.margin,
      borderWidth: 2.5,
      borderDash: [8, 5],
      pointRadius: 0,
    });
  }
  const xs = [d.lower, d.upper, 0, ...(d.margin !== null ? [d.margin] : [])];
  const [xMin, xMax] = paddedRange(xs);
  const title = `Paired Hoeffding interval against the margin (n = ${d.n}): ${d.outcome ?? 'no outcome'}`;
  const config: ChartConfiguration<'scatter'> = {
    type: 'scatter',
    data: { datasets },
    options: {
      ...baseOptions(title),
      plugins: { title: { display: true, text: title, font: { size: 15 } }, legend: { position: 'top', align: 'start' } },
      scales: {
        x: { type: 'linear', min: xMin, max: xMax, title: { display: true, text: 'paired difference in accuracy, treatment − baseline' } },
        y: { type: 'linear', min: -1.5, max: 1.5, display: false },
      },
    },
  };
  return { id: 'chart-hoeffding', section: 'decision', title: 'Hoeffding interval', config, dataColors: d.margin !== null ? [COLORS.pass, COLORS.margin] : [COLORS.pass] };
}
