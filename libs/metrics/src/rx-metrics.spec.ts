import { METRIC_NAMES } from './metric-names';
import type { StepRecord } from '@rx/contracts';
import { createRxMetrics, metricSamples, stepMetricsOf } from './rx-metrics';
import { parseExposition } from '@rx/metrics/testing';

describe('metric names', () => {
  it('follow rx_<area>_<thing>[_<unit>] with _total counters and _seconds histograms', () => {
    const names = Object.values(METRIC_NAMES);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^rx_[a-z]+(_[a-z0-9]+)+$/);
  });

  it('types match their suffixes in the exposition', async () => {
    const m = createRxMetrics({ service: 'trainer', defaultMetrics: false });
    m.stepCommitted('gs1_kernel');
    m.observeStage('train', 'gs1_kernel', 1.5);
    m.countDeadLetter('rollouts');
    m.observeBackend('sample', 0.2, false);
    m.countRollouts('grade', 'grpo_gs8', 64);
    const families = parseExposition(await m.exposition());
    for (const f of families.values()) {
      if (f.name.endsWith('_total')) expect(f.type).toBe('COUNTER');
      if (f.type === 'COUNTER') expect(f.name).toMatch(/_total$/);
      if (f.type === 'HISTOGRAM') expect(f.name).toMatch(/_seconds$/);
    }
  });
});

describe('createRxMetrics', () => {
  it('registers every rx metric and the default process metrics, with the service label', async () => {
    const m = createRxMetrics({ service: 'sampler' });
    m.setGate({ run: 'r1', arm: 'gs1_kernel', gate: 'kernel_effective_neighbors_p10' }, 9.25, true);
    m.setGateBound('kernel_effective_neighbors_p10', 'min', 8);
    m.recordStep('gs1_kernel', { rewardMean: 0.375, fracNonzeroAdvantage: 0.96875, effectiveNeighbors: { p10: 9.25, p50: 20, p90: 31 }, loss: -1.5 });
    const families = parseExposition(await m.exposition());
    for (const name of Object.values(METRIC_NAMES)) expect(families.has(name)).toBe(true);
    expect(families.has('process_cpu_seconds_total')).toBe(true);
    expect(families.has('nodejs_eventloop_lag_seconds')).toBe(true);

    const gate = families.get('rx_gate_value')!.metrics[0];
    expect(gate.labels).toEqual({ run: 'r1', arm: 'gs1_kernel', gate: 'kernel_effective_neighbors_p10', service: 'sampler' });
    expect(Number(gate.value)).toBe(9.25);
    expect(Number(families.get('rx_gate_pass')!.metrics[0].value)).toBe(1);
    expect(families.get('rx_gate_bound')!.metrics[0].labels).toMatchObject({ gate: 'kernel_effective_neighbors_p10', side: 'min' });
    const q = families.get('rx_step_effective_neighbors')!.metrics.map((s) => [s.labels!.quantile, Number(s.value)]);
    expect(q).toEqual([['p10', 9.25], ['p50', 20], ['p90', 31]]);
    expect(Number(families.get('rx_step_loss')!.metrics[0].value)).toBe(-1.5);
  });

  it('shows the batch signals of a step record per arm: zero-spread and by-kind groups, clipped completions, lengths, reward spread', async () => {
    // 2 prompts x 2 rollouts (group mean): p1 rewards 1, 1 (constant, all good, all correct); p2 rewards 0.9, 0 (mixed,
    // one of them cut at 64 tokens)
    const rollout = (i: number, promptId: string, reward: number, correct: boolean, completionTokens: number, stopReason: 'stop' | 'length') => ({
      rolloutId: `2-${i}`, promptId, phi: [1, -1] as [number, number], completionTokens, stopReason, reward, correct, formatOk: true,
      advantage: 0, baseline: 0, effectiveNeighbors: 1, fallback: false, dropped: false,
    });
    const record: StepRecord = {
      runId: 'r1.t1', arm: 'grpo_gs8', step: 2, estimator: 'group_mean',
      rollouts: [rollout(0, 'p1', 1, true, 10, 'stop'), rollout(1, 'p1', 1, true, 20, 'stop'), rollout(2, 'p2', 0.9, true, 30, 'stop'), rollout(3, 'p2', 0, false, 64, 'length')],
      datums: 4, loss: -0.5, optimizerStep: 3, learningRate: 4e-5,
      gate: { executedGroupSize: 2, rewardMean: 0.725, fracNonzeroAdvantage: 0.5, effectiveNeighbors: { p10: 1, p50: 1, p90: 1 }, fallbackFraction: 0 },
      timings: {}, samplerPath: 'embedded://w/2', committedAt: '2026-01-01T00:00:00.000Z',
    };
    const m = createRxMetrics({ service: 'controller', defaultMetrics: false });
    m.recordStep('grpo_gs8', stepMetricsOf(record));
    const f = parseExposition(await m.exposition());
    const value = (name: string, labels: Record<string, string> = {}) => Number(f.get(name)!.metrics.find((x) => Object.entries({ arm: 'grpo_gs8', ...labels }).every(([k, v]) => x.labels![k] === v))!.value);
    expect(value('rx_step_reward_zero_std_ratio')).toBe(0.5);
    expect(Object.fromEntries(f.get('rx_step_group_ratio')!.metrics.map((x) => [x.labels!.group, Number(x.value)]))).toEqual({ mixed: 0.5, all_good: 0.5, all_bad: 0, all_correct: 0.5, all_wrong: 0 });
    expect(value('rx_step_clipped_completions_ratio')).toBe(0.25);
    expect([value('rx_step_completion_length_tokens', { stat: 'mean' }), value('rx_step_completion_length_tokens', { stat: 'max' })]).toEqual([31, 64]);
    // rewards 1, 1, 0.9, 0: mean 0.725, sum of squares 2.81, var 2.81/4 - 0.725^2 = 0.7025 - 0.525625 = 0.176875
    expect(value('rx_step_reward_std')).toBeCloseTo(Math.sqrt(0.176875), 12);
    // the arm is the only label besides the kind and the service: no run id (labels are never ids)
    expect(Object.keys(f.get('rx_step_group_ratio')!.metrics[0].labels!).sort()).toEqual(['arm', 'group', 'service']);
  });

  it('counts backend errors apart from latency observations', async () => {
    const m = createRxMetrics({ service: 'sampler', defaultMetrics: false });
    m.observeBackend('sample', 0.02, true);
    m.observeBackend('sample', 0.03, false);
    // (histograms read from the registry: parse-prometheus-text-format merges a histogram's label sets)
    const h = await metricSamples(m.registry, 'rx_backend_request_duration_seconds');
    const at = (metricName: string, le?: number) => h.find((v) => v.metricName === metricName && v.labels.operation === 'sample' && (le === undefined || v.labels.le === le))?.value;
    expect(at('rx_backend_request_duration_seconds_count')).toBe(2);
    expect(at('rx_backend_request_duration_seconds_bucket', 0.025)).toBe(1);
    expect(Number(parseExposition(await m.exposition()).get('rx_backend_request_errors_total')!.metrics[0].value)).toBe(1);
  });

  it('reads the queue snapshot at scrape time, once for both queue gauges', async () => {
    let calls = 0;
    let depth = 3;
    const m = createRxMetrics({
      service: 'grader',
      defaultMetrics: false,
      queueSnapshot: async () => {
        calls++;
        return [{ queue: 'rollouts', depth, oldestWaitingAgeSeconds: 12.5 }];
      },
    });
    let f = parseExposition(await m.exposition());
    expect(f.get('rx_queue_depth_jobs')!.metrics).toEqual([{ labels: { queue: 'rollouts', service: 'grader' }, value: '3' }]);
    expect(f.get('rx_queue_oldest_waiting_age_seconds')!.metrics[0].value).toBe('12.5');
    expect(calls).toBe(1);
    depth = 5;
    await new Promise((r) => setTimeout(r, 300));
    f = parseExposition(await m.exposition());
    expect(f.get('rx_queue_depth_jobs')!.metrics[0].value).toBe('5');
  });

  it('gives each call its own registry (two services in one process do not collide)', async () => {
    const a = createRxMetrics({ service: 'sampler' });
    const b = createRxMetrics({ service: 'grader' });
    a.countDeadLetter('rollouts');
    const fb = parseExposition(await b.exposition());
    expect(fb.get('rx_dead_letters_total')!.metrics).toEqual([]);
  });
});
