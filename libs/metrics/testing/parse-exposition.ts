// TEST HELPER. Parses a Prometheus text exposition with parse-prometheus-text-format (an untyped devDependency,
// typed here and loaded on first use). Caveat: that parser merges the label sets of a labelled histogram into
// one sample without labels; read histograms from registry.getSingleMetric(name).get() instead.
export interface ParsedSample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

export interface ParsedFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: ParsedSample[];
}

type Parse = ((text: string) => ParsedFamily[]) & { default?: (text: string) => ParsedFamily[] };

export function parseExposition(text: string): Map<string, ParsedFamily> {
  const parse = require('parse-prometheus-text-format') as Parse;
  const fn: (text: string) => ParsedFamily[] = parse.default ?? parse;
  return new Map(fn(text).map((f) => [f.name, f]));
}
