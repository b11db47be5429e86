import { formatDuration } from './format-duration';

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [59.4, '59s'],
    [125, '2m05s'],
    [3725, '1h02m'],
    [-1, '?'],
    [Number.NaN, '?'],
  ])('%s s is %s', (seconds, text) => expect(formatDuration(seconds)).toBe(text));
});
