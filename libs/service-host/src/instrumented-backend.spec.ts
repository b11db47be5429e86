import { createRxMetrics, metricSamples } from '@rx/metrics';
import { instrumentBackend } from './instrumented-backend';
import { HashChainPolicyBackend } from '@rx/backend/testing';

describe('instrumentBackend', () => {
  it('times every call by operation and counts the ones that throw', async () => {
    const raw = new HashChainPolicyBackend();
    const metrics = createRxMetrics({ service: 'trainer', defaultMetrics: false });
    const backend = instrumentBackend(raw, metrics);
    expect(backend.kind).toBe('embedded');
    const tc = await backend.createLoraTrainingClient({ baseModel: 'b', rank: 1, seed: 0 });
    await expect(tc.optimStep({ learningRate: 1, beta1: 0.9, beta2: 0.95, eps: 1e-8 })).rejects.toThrow(/without a forward_backward/);
    const path = await tc.saveWeightsForSampler('w');
    const sc = await backend.createSamplingClient(path);
    expect(sc.modelPath).toBe(path);
    await sc.computeLogprobs([1, 2, 3]);
    expect(await backend.ping()).toBe(true);
    // (read from the registry: parse-prometheus-text-format merges the label sets of a histogram)
    const duration = await metricSamples(metrics.registry, 'rx_backend_request_duration_seconds');
    const counts = Object.fromEntries(duration.filter((v) => v.metricName?.endsWith('_count')).map((v) => [v.labels.operation, v.value]));
    expect(counts).toEqual({ create_training_client: 1, optim_step: 1, save_weights_for_sampler: 1, create_sampling_client: 1, compute_logprobs: 1, ping: 1 });
    const errors = await metricSamples(metrics.registry, 'rx_backend_request_errors_total');
    expect(errors.map((v) => [v.labels.operation, v.value])).toEqual([['optim_step', 1]]);
  });
});
