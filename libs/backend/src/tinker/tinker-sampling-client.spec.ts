// A sample whose future expired (HTTP 410) is submitted again as a new request with a new seq_id (as the SDK's
// retry handler does), without a count limit, until it has made no progress for the stuck timeout (then
// TinkerStuckError, the end a run resumes from), with the progress line of every other wait; seq_ids keep counting
// from there. The core is a real TinkerCore (its wait clock and back-off) whose submit-and-await is a recording
// stand-in: what is checked is the bodies the sampling client hands it.
import { TinkerCore, DEFAULT_TINKER_TIMING, type TinkerTiming } from './tinker-core';
import { TinkerApiError, TinkerStuckError } from './tinker-errors';
import { TinkerHttp } from './tinker-http';
import { TinkerSamplingClient } from './tinker-sampling-client';

function recordingCore(expiredFirst: number, timing: Partial<TinkerTiming> = {}): { core: TinkerCore; seqIds: number[]; warnings: string[]; http: TinkerHttp } {
  const seqIds: number[] = [];
  const warnings: string[] = [];
  const http = new TinkerHttp({ baseUrl: 'http://127.0.0.1:9', apiKey: 'tml-x', timeoutMs: 1000, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 }, userAgent: 'rx-test' });
  const core = new TinkerCore(http, {
    pollTimeoutMs: 1000,
    futureTimeoutMs: 1000,
    heartbeatIntervalMs: 10_000,
    tags: [],
    logger: { warn: (m) => warnings.push(m) },
    timing: { ...DEFAULT_TINKER_TIMING, appRetryBaseDelayMs: 1, appRetryMaxDelayMs: 2, ...timing },
  });
  let expired = 0;
  Object.assign(core, {
    sessionOf: async () => ({ sessionId: 's' }),
    submitAndAwait: async (_name: string, body: { seq_id: number; num_samples: number }) => {
      seqIds.push(body.seq_id);
      if (expired++ < expiredFirst) throw new TinkerApiError('POST /api/v1/asample', 410, '{}', 1, 'the future expired on the server');
      return { sequences: Array.from({ length: body.num_samples }, () => ({ tokens: [5], logprobs: [-0.5], stop_reason: 'length' })), prompt_logprobs: null };
    },
  });
  return { core, seqIds, warnings, http };
}

const PARAMS = { maxTokens: 1, temperature: 1 };

describe('TinkerSamplingClient resubmission after an expired future', () => {
  it('takes a new seq_id for each resubmission, and the next call continues after them', async () => {
    const { core, seqIds } = recordingCore(2);
    const client = new TinkerSamplingClient(core, 'tinker://m/sampler_weights/x', 'sess-1');
    await expect(client.sample([1, 2], 1, PARAMS)).resolves.toHaveLength(1);
    await client.sample([1, 2], 1, PARAMS);
    expect(seqIds).toEqual([0, 1, 2, 3]);
  });

  it('has no count limit: a sample that expired 12 times running is resubmitted a 13th time and served', async () => {
    // the hosted-like acceptance once died here: three 410s in a row on one sample, with a limit of two resubmissions
    const { core, seqIds } = recordingCore(12);
    const client = new TinkerSamplingClient(core, 'tinker://m/sampler_weights/x', 'sess-1');
    await expect(client.sample([1, 2], 1, PARAMS)).resolves.toHaveLength(1);
    expect(seqIds).toEqual(Array.from({ length: 13 }, (_, i) => i));
  });

  it('stops at the stuck timeout with TinkerStuckError, after progress lines, when the 410s never end', async () => {
    const { core, seqIds, warnings } = recordingCore(Number.POSITIVE_INFINITY, { stuckTimeoutMs: 300, waitReportEveryMs: 100 });
    const client = new TinkerSamplingClient(core, 'tinker://m/sampler_weights/x', 'sess-1');
    const err = await client.sample([1, 2], 1, PARAMS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TinkerStuckError);
    expect((err as Error).message).toMatch(/^Tinker asample made no progress for \d+ s \(the stuck timeout; last: HTTP 410\)$/);
    expect(seqIds.length).toBeGreaterThan(3);
    expect(new Set(seqIds).size).toBe(seqIds.length);
    expect(warnings.some((w) => /^Tinker: HTTP 410 on asample for \d+ s, retrying \(the run stops at the stuck timeout, 0 s; rx run --resume continues it\)$/.test(w))).toBe(true);
  });
});
