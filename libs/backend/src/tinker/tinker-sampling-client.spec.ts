// A sample whose future expired (HTTP 410) is submitted again as a new request with a new seq_id (as the SDK's
// retry handler does); seq_ids keep counting from there. The core is a recording stand-in: what is checked is the
// bodies the sampling client hands it.
import type { TinkerCore } from './tinker-core';
import { TinkerApiError } from './tinker-errors';
import { TinkerSamplingClient } from './tinker-sampling-client';

function recordingCore(expiredFirst: number): { core: TinkerCore; seqIds: number[] } {
  const seqIds: number[] = [];
  let expired = 0;
  const core = {
    sessionGeneration: 1,
    sessionOf: async () => ({ sessionId: 's' }),
    submitAndAwait: async (_name: string, body: { seq_id: number; num_samples: number }) => {
      seqIds.push(body.seq_id);
      if (expired++ < expiredFirst) throw new TinkerApiError('POST /api/v1/asample', 410, '{}', 1, 'the future expired on the server');
      return { sequences: Array.from({ length: body.num_samples }, () => ({ tokens: [5], logprobs: [-0.5], stop_reason: 'length' })), prompt_logprobs: null };
    },
  };
  return { core: core as unknown as TinkerCore, seqIds };
}

describe('TinkerSamplingClient resubmission after an expired future', () => {
  it('takes a new seq_id for each resubmission, and the next call continues after them', async () => {
    const { core, seqIds } = recordingCore(2);
    const client = new TinkerSamplingClient(core, 'tinker://m/sampler_weights/x', 'sess-1');
    await expect(client.sample([1, 2], 1, { maxTokens: 1, temperature: 1 })).resolves.toHaveLength(1);
    await client.sample([1, 2], 1, { maxTokens: 1, temperature: 1 });
    expect(seqIds).toEqual([0, 1, 2, 3]);
  });

  it('gives up after two resubmissions with the 410', async () => {
    const { core, seqIds } = recordingCore(5);
    const client = new TinkerSamplingClient(core, 'tinker://m/sampler_weights/x', 'sess-1');
    await expect(client.sample([1, 2], 1, { maxTokens: 1, temperature: 1 })).rejects.toThrow(/HTTP 410/);
    expect(seqIds).toEqual([0, 1, 2]);
  });
});
