// The metric names and grouping labels a PromQL expression uses (enough PromQL for dashboard checks: selectors,
// aggregations with by/without, functions, ranges, Grafana $variables).
export type PromqlUse = {
  metrics: string[];
  // label names in selectors, per metric
  matchers: Array<{ metric: string; labels: string[] }>;
  // label names in by (...) / without (...) / on (...) / ignoring (...)
  grouping: string[];
};

const keywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool', 'and', 'or', 'unless', 'inf', 'nan']);

export function promqlUse(expr: string): PromqlUse {
  const noStrings = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
  const matchers: PromqlUse['matchers'] = [];
  for (const m of noStrings.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g)) {
    matchers.push({ metric: m[1], labels: [...m[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((x) => x[1]) });
  }
  const grouping: string[] = [];
  for (const m of noStrings.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)) {
    grouping.push(...m[1].split(',').map((s) => s.trim()).filter(Boolean));
  }
  const stripped = noStrings
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, ' ');
  const metrics: string[] = [];
  for (const m of stripped.matchAll(/(?<![A-Za-z0-9_:.])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![A-Za-z0-9_:])(\s*\()?/g)) {
    if (m[2] || keywords.has(m[1].toLowerCase())) continue;
    metrics.push(m[1]);
  }
  return { metrics: [...new Set(metrics)], matchers, grouping: [...new Set(grouping)] };
}
