// The Grafana dashboard against what the services export: every panel query names metrics that are registered
// (libs/metrics' registry, the policy server's registry, Prometheus' own `up`), with labels those metrics carry.
import * as fs from 'node:fs';
import { Histogram, Registry } from 'prom-client';
import { z } from 'zod';
import { createRxMetrics } from '@rx/metrics';
import { readRepoFile, repoPath } from './deploy-layout';
import { promqlUse } from './promql-names';

type Exported = { labels: Set<string>; from: string };

// Labels Prometheus adds to every scraped series.
const targetLabels = ['job', 'instance'];

function addRegistry(into: Map<string, Exported>, registry: Registry, from: string, defaultLabels: string[]): void {
  for (const metric of registry.getMetricsAsArray()) {
    const { name, labelNames } = metric as unknown as { name: string; labelNames?: readonly string[] };
    const labels = new Set([...(labelNames ?? []), ...defaultLabels, ...targetLabels]);
    if (metric instanceof Histogram) {
      into.set(`${name}_bucket`, { labels: new Set([...labels, 'le']), from });
      into.set(`${name}_sum`, { labels, from });
      into.set(`${name}_count`, { labels, from });
    } else {
      into.set(name, { labels, from });
    }
  }
}

// Every series name the stack exposes, with its label names.
function exportedMetrics(): Map<string, Exported> {
  const out = new Map<string, Exported>();
  out.set('up', { labels: new Set(targetLabels), from: 'prometheus' });
  addRegistry(out, createRxMetrics({ service: 'controller' }).registry, '@rx/metrics createRxMetrics', ['service']);
  const serverMetrics = repoPath('apps', 'policy-server', 'src', 'server-metrics.ts');
  if (fs.existsSync(serverMetrics)) {
    const mod = require(serverMetrics) as { ServerMetrics?: new (pending: () => number) => { registry: Registry } };
    if (mod.ServerMetrics) addRegistry(out, new mod.ServerMetrics(() => 0).registry, 'apps/policy-server ServerMetrics', []);
  }
  return out;
}

const panelSchema: z.ZodType<Panel> = z.lazy(() => z.object({
  id: z.number(),
  type: z.string(),
  title: z.string(),
  datasource: z.object({ type: z.string(), uid: z.string() }).optional(),
  targets: z.array(z.object({ refId: z.string(), expr: z.string(), datasource: z.object({ uid: z.string() }).optional() }).passthrough()).optional(),
  panels: z.array(panelSchema).optional(),
  repeat: z.string().optional(),
  gridPos: z.object({ h: z.number(), w: z.number(), x: z.number(), y: z.number() }),
}).passthrough());
type Panel = { id: number; type: string; title: string; datasource?: { type: string; uid: string }; targets?: Array<{ refId: string; expr: string; datasource?: { uid: string } }>; panels?: Panel[]; repeat?: string; gridPos: { h: number; w: number; x: number; y: number } };

const dashboard = z.object({
  uid: z.string(),
  title: z.string(),
  panels: z.array(panelSchema),
  templating: z.object({ list: z.array(z.object({ name: z.string(), query: z.union([z.string(), z.object({ query: z.string() }).passthrough()]) }).passthrough()) }),
}).passthrough().parse(JSON.parse(readRepoFile('tools/grafana/dashboards/rx.json')));

const allPanels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const queryPanels = allPanels.filter((p) => p.type !== 'row');
const datasourceUid = 'rx-prometheus';
const exported = exportedMetrics();

function problemsOf(expr: string, where: string): string[] {
  const use = promqlUse(expr);
  const problems: string[] = [];
  if (!use.metrics.length) problems.push(`${where}: names no metric: ${expr}`);
  for (const m of use.metrics) if (!exported.has(m)) problems.push(`${where}: ${m} is not exported by any service`);
  for (const { metric, labels } of use.matchers) {
    const known = exported.get(metric)?.labels;
    for (const l of labels) if (known && !known.has(l)) problems.push(`${where}: ${metric} has no label '${l}'`);
  }
  const available = new Set(use.metrics.flatMap((m) => [...(exported.get(m)?.labels ?? [])]));
  for (const l of use.grouping) if (!available.has(l)) problems.push(`${where}: groups by '${l}', which none of ${use.metrics.join(', ')} carries`);
  return problems;
}

describe('tools/grafana/dashboards/rx.json', () => {
  it('reads the exported metric catalogue from the services (sanity of the check itself)', () => {
    expect(exported.has('rx_gate_value')).toBe(true);
    expect(exported.has('rx_stage_duration_seconds_bucket')).toBe(true);
    expect(exported.has('rx_stage_duration_seconds')).toBe(false);
    expect(promqlUse('histogram_quantile(0.95, sum by (le, stage) (rate(x_bucket{arm=~"$arm"}[$__rate_interval])))'))
      .toEqual({ metrics: ['x_bucket'], matchers: [{ metric: 'x_bucket', labels: ['arm'] }], grouping: ['le', 'stage'] });
  });

  it('has unique panel ids, and every query panel targets the provisioned Prometheus datasource', () => {
    const ids = allPanels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of queryPanels) {
      expect({ panel: p.title, uid: p.datasource?.uid, targets: (p.targets ?? []).length > 0 }).toEqual({ panel: p.title, uid: datasourceUid, targets: true });
      for (const t of p.targets ?? []) expect({ panel: p.title, uid: t.datasource?.uid ?? datasourceUid }).toEqual({ panel: p.title, uid: datasourceUid });
    }
  });

  it('queries only metrics the services export, with labels they carry', () => {
    const problems = queryPanels.flatMap((p) => (p.targets ?? []).flatMap((t) => problemsOf(t.expr, `${p.title} [${t.refId}]`)));
    const variables = dashboard.templating.list.flatMap((v) => {
      const q = typeof v.query === 'string' ? v.query : v.query.query;
      const m = /^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$/.exec(q.trim());
      if (!m) return [`variable ${v.name}: unsupported query ${q}`];
      const known = exported.get(m[1]);
      return !known ? [`variable ${v.name}: ${m[1]} is not exported`] : known.labels.has(m[2]) ? [] : [`variable ${v.name}: ${m[1]} has no label ${m[2]}`];
    });
    expect([...problems, ...variables]).toEqual([]);
  });

  it('uses only the dashboard variables it defines', () => {
    const defined = new Set([...dashboard.templating.list.map((v) => v.name), '__rate_interval', '__interval', '__range']);
    const used = queryPanels.flatMap((p) => [...(p.targets ?? []).flatMap((t) => [...t.expr.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1])), ...(p.repeat ? [p.repeat] : []), ...[...p.title.matchAll(/\$([A-Za-z_]+)/g)].map((m) => m[1])]);
    expect([...new Set(used)].filter((u) => !defined.has(u))).toEqual([]);
  });

  it('shows gates against their bounds, reward per arm, queue depths and step durations', () => {
    const exprs = (p: Panel) => (p.targets ?? []).map((t) => t.expr).join('\n');
    const panelWith = (...metrics: string[]) => queryPanels.filter((p) => metrics.every((m) => promqlUse(exprs(p)).metrics.includes(m)));
    expect(panelWith('rx_gate_value', 'rx_gate_bound').length).toBeGreaterThan(0);
    expect(panelWith('rx_gate_pass').length).toBeGreaterThan(0);
    expect(panelWith('rx_step_reward_mean').some((p) => promqlUse(exprs(p)).grouping.includes('arm'))).toBe(true);
    expect(panelWith('rx_queue_depth_jobs').length).toBeGreaterThan(0);
    expect(panelWith('rx_stage_duration_seconds_bucket').some((p) => /histogram_quantile/.test(exprs(p)))).toBe(true);
    // one_of gates show their allowed values with the bound; the step index; the outcome: accuracy per model, effect
    // against its interval and the margin, the decision and the phase
    expect(panelWith('rx_gate_value', 'rx_gate_bound', 'rx_gate_allowed_value').length).toBeGreaterThan(0);
    expect(panelWith('rx_step_index').length).toBeGreaterThan(0);
    expect(panelWith('rx_step_kl_sample_train').length).toBeGreaterThan(0);
    expect(panelWith('rx_outcome_accuracy_ratio').some((p) => promqlUse(exprs(p)).grouping.includes('model'))).toBe(true);
    expect(panelWith('rx_outcome_effect', 'rx_outcome_interval', 'rx_outcome_margin').length).toBeGreaterThan(0);
    expect(panelWith('rx_outcome_decision').length).toBeGreaterThan(0);
    expect(panelWith('rx_run_phase').length).toBeGreaterThan(0);
    // the training signals: the zero-spread share and the length-clipped share, per arm
    expect(panelWith('rx_step_reward_zero_std_ratio').some((p) => promqlUse(exprs(p)).grouping.includes('arm'))).toBe(true);
    expect(panelWith('rx_step_clipped_completions_ratio').some((p) => promqlUse(exprs(p)).grouping.includes('arm'))).toBe(true);
  });

  it('lays panels out on the 24-column grid without overlaps', () => {
    const boxes = dashboard.panels.map((p) => ({ t: p.title, ...p.gridPos }));
    const clashes: string[] = [];
    for (const b of boxes) if (b.x < 0 || b.x + b.w > 24) clashes.push(`${b.t} leaves the grid`);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) clashes.push(`${a.t} overlaps ${b.t}`);
    }
    expect(clashes).toEqual([]);
  });
});
