import { devEvalPoints } from './dev-accuracy';

const checkpoints = (n: number) => Array.from({ length: n }, (_, step) => ({ step, sampler_path: `embedded://run/arm/step-${step}` }));

describe('devEvalPoints', () => {
  it('scores the weights before steps 0, 10, 20, 30 (0, 10, 20, 30 updates) and the final weights (40)', () => {
    expect(devEvalPoints(checkpoints(40), 'embedded://final', 40)).toEqual([
      { updates: 0, sampler_path: 'embedded://run/arm/step-0' },
      { updates: 10, sampler_path: 'embedded://run/arm/step-10' },
      { updates: 20, sampler_path: 'embedded://run/arm/step-20' },
      { updates: 30, sampler_path: 'embedded://run/arm/step-30' },
      { updates: 40, sampler_path: 'embedded://final' },
    ]);
  });

  it('scores a short run at its start and its end only', () => {
    expect(devEvalPoints(checkpoints(3), 'embedded://final', 3)).toEqual([
      { updates: 0, sampler_path: 'embedded://run/arm/step-0' },
      { updates: 3, sampler_path: 'embedded://final' },
    ]);
  });
});
