// @rx/metrics/testing: reads a Prometheus exposition back (with the devDependency parse-prometheus-text-format),
// for tests that assert on /metrics; imported by tests and tools only.
export * from './parse-exposition';
