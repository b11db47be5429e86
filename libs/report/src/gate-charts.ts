// The charts of the page's gates section: one per gate metric, each pilot's measured value against the region its
// bound allows.
import type { ChartConfiguration } from 'chart.js';
import { baseOptions, COLORS, paddedRange, type BarLineData, type ChartSpec } from './chart-spec';
import type { GateBound, GateReportEntry } from './run-data';

export function gateMetricCharts(reports: readonly GateReportEntry[]): ChartSpec[] {
  const metrics = [...new Set(reports.flatMap((r) => r.results.map((g) => g.metric)))];
  return metrics.map((metric, index) => {
    const rows = reports.flatMap((r) => r.results.filter((g) => g.metric === metric).map((g) => ({ label: r.label, g })));
    const labels = rows.map((r) => r.label);
    const values = rows.flatMap((r) => valuesOf(r.g.value));
    const boundNumbers = rows.flatMap((r) => [...(r.g.bound.one_of ?? []), ...(r.g.bound.min !== undefined ? [r.g.bound.min] : []), ...(r.g.bound.max !== undefined ? [r.g.bound.max] : [])]);
    const [axisMin, axisMax] = paddedRange([...values, ...boundNumbers]);
    const halfBand = (axisMax - axisMin) * 0.03;
    const maxAllowed = Math.max(1, ...rows.map((r) => r.g.bound.one_of?.length ?? 1));
    const bands = Array.from({ length: maxAllowed }, (_, k) => ({
      type: 'bar' as const,
      label: k === 0 ? 'allowed by the bound' : `allowed by the bound (${k + 1})`,
      data: rows.map((r) => bandOf(r.g.bound, k, axisMin, axisMax, halfBand)),
      backgroundColor: 'rgba(64, 192, 87, 0.22)',
      borderColor: COLORS.band,
      borderWidth: 2,
      borderSkipped: false,
      grouped: false,
      // drawn under the values (chart.js draws a lower order on top)
      order: 2,
      barPercentage: 0.55,
      categoryPercentage: 1,
    }));
    const first = rows[0].g;
    // a one-sided bound (min only or max only) is also drawn as a threshold line across the reports
    const thresholdOf = (b: GateBound): number | null => (b.min !== undefined && b.max === undefined ? b.min : b.max !== undefined && b.min === undefined ? b.max : null);
    const thresholds = rows.map((r) => ({ x: r.label, y: thresholdOf(r.g.bound) }));
    const threshold = thresholds.every((t) => t.y !== null)
      ? [{ type: 'line' as const, label: `threshold (${first.boundText})`, data: thresholds as Array<{ x: string; y: number }>, order: 0, borderColor: COLORS.margin, backgroundColor: COLORS.margin, borderWidth: 2, borderDash: [8, 5], pointRadius: 0, fill: false }]
      : [];
    const points = rows.flatMap((r) => valuesOf(r.g.value).map((v) => ({ x: r.label, y: v, pass: r.g.pass })));
    const pointColors = points.map((p) => (p.pass ? COLORS.pass : COLORS.fail));
    const config: ChartConfiguration<'bar' | 'line', BarLineData, string> = {
      type: 'bar',
      data: {
        labels,
        datasets: [
          ...bands.filter((b) => b.data.some((d) => d !== null)).map((b) => ({ ...b, data: b.data as BarLineData })),
          {
            type: 'line' as const,
            label: 'measured value (blue pass, red fail)',
            data: points.map((p) => ({ x: p.x, y: p.y })),
            showLine: false,
            order: 1,
            pointRadius: 8,
            pointHoverRadius: 9,
            pointBackgroundColor: pointColors,
            pointBorderColor: pointColors,
            backgroundColor: COLORS.pass,
            borderColor: COLORS.pass,
          },
          ...threshold,
        ],
      },
      options: {
        ...baseOptions(`${metric}: needs ${first.boundText}`),
        scales: {
          x: { title: { display: true, text: 'gate report' } },
          y: { min: axisMin, max: axisMax, title: { display: true, text: metric } },
        },
      },
    };
    const dataColors = [...new Set([COLORS.band, ...pointColors, ...(threshold.length > 0 ? [COLORS.margin] : [])])];
    return { id: `chart-gate-${index}`, section: 'gates' as const, title: metric, config, dataColors };
  });
}

function valuesOf(v: number | number[] | null): number[] {
  return v === null ? [] : Array.isArray(v) ? v : [v];
}

/** the allowed region of a bound drawn as a floating bar: [min, max], open ends to the axis edge, ±halfBand around an allowed value */
function bandOf(b: GateBound, k: number, axisMin: number, axisMax: number, halfBand: number): [number, number] | null {
  if (b.one_of) {
    const v = b.one_of[k];
    return v === undefined ? null : [v - halfBand, v + halfBand];
  }
  if (k > 0 || (b.min === undefined && b.max === undefined)) return null;
  return [b.min ?? axisMin, b.max ?? axisMax];
}
