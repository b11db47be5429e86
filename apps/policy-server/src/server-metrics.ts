// Prometheus metrics of the policy server: prom-client's default process metrics plus requests, request
// durations and futures, on a registry of its own (labels from fixed sets only).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Endpoint labels: the protocol's routes; anything else is 'other'. */
export const ENDPOINT_LABELS = [
  'healthz',
  'client/config',
  'client/dynamic_config',
  'create_session',
  'session_heartbeat',
  'telemetry',
  'create_model',
  'get_info',
  'forward_backward',
  'optim_step',
  'save_weights',
  'load_weights',
  'save_weights_for_sampler',
  'create_sampling_session',
  'asample',
  'samplers',
  'unload_model',
  'retrieve_future',
  'health',
  'metrics',
] as const;

export function endpointLabel(path: string): string {
  const p = path.replace(/^\/api\/v1\//, '').replace(/^\//, '');
  if (p.startsWith('samplers/')) return 'samplers';
  return (ENDPOINT_LABELS as readonly string[]).includes(p) ? p : 'other';
}

export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'endpoint' | 'status'>;
  readonly duration: Histogram<'endpoint'>;
  readonly futuresSettled: Counter<'outcome'>;
  readonly futuresPending: Gauge;

  constructor(pendingFutures: () => number) {
    // as on every rx service: the service name on every series, so one Prometheus job can scrape them all
    this.registry.setDefaultLabels({ service: 'policy-server' });
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'rx_policy_server_requests_total',
      help: 'HTTP requests answered, by endpoint and status code',
      labelNames: ['endpoint', 'status'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'rx_policy_server_request_duration_seconds',
      help: 'Time to answer an HTTP request (retrieve_future includes its long-poll)',
      labelNames: ['endpoint'],
      buckets: [0.005, 0.02, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    this.futuresSettled = new Counter({
      name: 'rx_policy_server_futures_settled_total',
      help: 'Work requests finished, by outcome',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.futuresPending = new Gauge({
      name: 'rx_policy_server_futures_pending',
      help: 'Work requests queued or running',
      registers: [this.registry],
      collect(this: Gauge) {
        this.set(pendingFutures());
      },
    });
  }

  stop(): void {
    this.registry.clear();
  }
}

