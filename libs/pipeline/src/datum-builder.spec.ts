import fc from 'fast-check';
import { buildDatum } from './datum-builder';
import { referenceDatum } from './datum-builder.reference';

describe('buildDatum', () => {
  it('lays out a small example exactly (prompt masked, stop token carries the advantage)', () => {
    // prompt [10, 11, 12], completion [20, 21, STOP=99] with logprobs [-0.5, -1.5, -0.25], A = 0.75
    const d = buildDatum([10, 11, 12], [20, 21, 99], [-0.5, -1.5, -0.25], 0.75);
    expect(d.inputTokens).toEqual([10, 11, 12, 20, 21]);
    expect(d.targetTokens).toEqual([11, 12, 20, 21, 99]);
    expect(d.samplingLogprobs).toEqual([0, 0, -0.5, -1.5, -0.25]);
    expect(d.advantages).toEqual([0, 0, 0.75, 0.75, 0.75]);
  });

  it('matches the independent reference on arbitrary prompts and completions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(250000), { minLength: 1, maxLength: 40 }),
        fc.array(fc.tuple(fc.nat(250000), fc.double({ min: -20, max: 0, noNaN: true })), { maxLength: 40 }),
        fc.double({ min: -2, max: 2, noNaN: true }),
        (prompt, completion, advantage) => {
          const tokens = completion.map((c) => c[0]);
          const logprobs = completion.map((c) => c[1]);
          expect(buildDatum(prompt, tokens, logprobs, advantage)).toEqual(referenceDatum(prompt, tokens, logprobs, advantage));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps every field the same length, one per target position', () => {
    const d = buildDatum([1, 2], [3, 4, 5, 6], [-1, -2, -3, -4], -0.1);
    for (const field of [d.targetTokens, d.samplingLogprobs, d.advantages]) expect(field).toHaveLength(d.inputTokens.length);
    expect(d.inputTokens).toHaveLength(5);
    expect(d.advantages.filter((a) => a !== 0)).toHaveLength(4);
  });

  it('refuses an empty prompt, mismatched logprobs and a non-finite advantage', () => {
    expect(() => buildDatum([], [1], [-1], 0)).toThrow(/at least one prompt token/);
    expect(() => buildDatum([1], [1, 2], [-1], 0)).toThrow(/2 completion tokens but 1 logprobs/);
    expect(() => buildDatum([1], [1], [-1], Number.NaN)).toThrow(/advantage must be finite/);
  });
});
