// Parses a Prometheus text exposition with parse-prometheus-text-format (untyped package: typed here).
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

// eslint-disable-next-line @typescript-eslint/no-require-imports
const parse = require('parse-prometheus-text-format') as ((text: string) => ParsedFamily[]) & { default?: (text: string) => ParsedFamily[] };

export function parseExposition(text: string): Map<string, ParsedFamily> {
  const fn = typeof parse === 'function' ? parse : (parse.default as (text: string) => ParsedFamily[]);
  return new Map(fn(text).map((f) => [f.name, f]));
}
