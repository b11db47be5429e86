import { buildDatum } from './datum-builder';
import { trainerLogprobStats } from './logprob-stats';

describe('trainerLogprobStats (the cookbook optim/kl_sample_train_v1, _v2 and optim/entropy)', () => {
  // prompt [1, 2, 3]; completions [7, 8] with sampling logprobs [-1, -2] and [9] with [-0.5]
  const datums = [buildDatum([1, 2, 3], [7, 8], [-1, -2], 0.5), buildDatum([1, 2, 3], [9], [-0.5], -1)];
  // the learner's logprobs on every target position; prompt positions differ wildly and must be ignored
  const learner = [
    [-50, -50, -1.5, -1.0],
    [-50, -50, -0.25],
  ];

  it('averages over completion tokens only: d = (0.5, -1, -0.25)', () => {
    const s = trainerLogprobStats(datums, [2, 1], learner)!;
    // v1 = (0.5 - 1 - 0.25) / 3 = -0.25; v2 = 0.5 * (0.25 + 1 + 0.0625) / 3 = 0.21875; entropy = (1 + 2 + 0.5) / 3
    expect(s.klSampleTrainV1).toBeCloseTo(-0.25, 15);
    expect(s.klSampleTrainV2).toBeCloseTo(0.21875, 15);
    expect(s.entropy).toBeCloseTo(3.5 / 3, 15);
    expect(s.tokens).toBe(3);
  });

  it('is zero KL when the learner gives back the sampling logprobs', () => {
    const s = trainerLogprobStats(datums, [2, 1], datums.map((d) => d.samplingLogprobs))!;
    expect(s.klSampleTrainV1).toBe(0);
    expect(s.klSampleTrainV2).toBe(0);
  });

  it('gives nothing when the backend returned no (or misaligned) logprobs', () => {
    expect(trainerLogprobStats(datums, [2, 1], [])).toBeUndefined();
    expect(trainerLogprobStats(datums, [2, 1], [[-1], [-1]])).toBeUndefined();
  });
});
