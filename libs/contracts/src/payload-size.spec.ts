import { INLINE_PAYLOAD_LIMIT_BYTES, payloadBytes } from './payload-size';
import { QUEUE_CATALOG } from './queue-catalog';
import { fixtureTrainStep } from '@rx/contracts/testing';

describe('payload size of a 64 x 512-token batch', () => {
  // The heaviest payload of the pipeline: every rollout's tokens and logprobs plus advantages. Prompts of 256
  // tokens (GSM8K questions under the Qwen chat template are ~150-250).
  it.each([
    ['GS1: 64 prompts x 1', 64, 1],
    ['GRPO: 8 prompts x 8', 8, 8],
  ])('%s stays under the inline cap and passes its schema', (_name, prompts, groupSize) => {
    const payload = fixtureTrainStep({ prompts, groupSize, promptTokens: 256, completionTokens: 512 });
    expect(payload.rollouts).toHaveLength(64);
    const parsed = QUEUE_CATALOG['train-steps'].schema.parse(payload);
    const bytes = payloadBytes(parsed);
    expect(bytes).toBeLessThan(INLINE_PAYLOAD_LIMIT_BYTES);
    expect(INLINE_PAYLOAD_LIMIT_BYTES).toBeLessThanOrEqual(1024 * 1024);
  });

  it('counts UTF-8 bytes, not UTF-16 code units', () => {
    expect(payloadBytes({ q: 'é' })).toBe(Buffer.byteLength(JSON.stringify({ q: 'é' }), 'utf8'));
    expect(payloadBytes('€')).toBe(5);
  });

  it('full float64 logprobs of the same batch would not leave the margin the compact form has', () => {
    const payload = fixtureTrainStep({ prompts: 64, groupSize: 1, promptTokens: 256, completionTokens: 512 });
    const wide = { ...payload, rollouts: payload.rollouts.map((r) => ({ ...r, logprobs: r.logprobs.map((x) => x + 1e-13 * Math.PI) })) };
    expect(payloadBytes(wide) - payloadBytes(payload)).toBeGreaterThan(150_000);
  });
});
