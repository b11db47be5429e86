// paddedRange: the axis range of the gate and decision charts.
import { paddedRange } from './chart-spec';

describe('paddedRange', () => {
  it('pads the span and rounds out to a round step', () => {
    expect(paddedRange([-0.274, 0.274, -0.03, 0])).toEqual([-0.4, 0.4]); // pad 0.0274, step 0.2
    expect(paddedRange([2.39, 13.8, 8])).toEqual([0, 15]);
    expect(paddedRange([1, 1])).toEqual([0.4, 1.6]);
    expect(paddedRange([])).toEqual([0, 1]);
  });
});
