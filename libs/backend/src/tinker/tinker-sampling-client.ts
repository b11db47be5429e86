// A sampling client on the Tinker service, one sampling session (create_sampling_session, made by
// TinkerBackend): `asample` with the session id and this client's seq_id (0, 1, …) for completions (tokens,
// per-token sampling logprobs, stop reason; the result read as protobuf) and, as the SDK does, a 1-token sample
// with prompt_logprobs for computeLogprobs; both in one asample for sampleWithPromptLogprobs. A call keeps its
// seq_id across HTTP and application-level retries; a resubmission after its future expired (410) is a new request
// with a new seq_id, as in the SDK, resubmitted as the SDK's retry handler retries: without a count limit, with its
// back-off (1 s doubling to 30 s) and a progress line a minute, until the sample has made no progress for the stuck
// timeout (TinkerStuckError: the run ends `interrupted` and resumes).
import type { SampleParams, SampledSequence, SampledWithPromptLogprobs, SamplingClient } from '../policy-backend';
import type { TinkerCore } from './tinker-core';
import { tokensToModelInput } from './tinker-datum';
import { TinkerApiError, TinkerError } from './tinker-errors';
import { sampleResponseSchema, type SampleResponse } from './tinker-wire.schema';

function assertTokens(what: string, tokens: number[]): void {
  if (tokens.length === 0) throw new TinkerError(`${what}: the token list is empty`);
  const bad = tokens.findIndex((t) => !Number.isInteger(t) || t < 0);
  if (bad >= 0) throw new TinkerError(`${what}: tokens[${bad}] = ${tokens[bad]} is not a token id`);
}

function promptLogprobsOf(res: SampleResponse, promptLength: number): (number | null)[] {
  const lps = res.prompt_logprobs;
  if (!lps || lps.length !== promptLength) {
    throw new TinkerError(`asample: asked for prompt logprobs of ${promptLength} tokens, got ${lps?.length ?? 'none'}`);
  }
  return [null, ...lps.slice(1)];
}

export class TinkerSamplingClient implements SamplingClient {
  private seq = 0;

  private readonly generation: number;

  constructor(
    private readonly core: TinkerCore,
    readonly modelPath: string,
    readonly samplingSessionId: string,
  ) {
    this.generation = core.sessionGeneration;
  }

  async sample(promptTokens: number[], numSamples: number, params: SampleParams): Promise<SampledSequence[]> {
    return (await this.sampleOnce('sample', promptTokens, numSamples, params, false)).sequences;
  }

  async sampleWithPromptLogprobs(promptTokens: number[], numSamples: number, params: SampleParams): Promise<SampledWithPromptLogprobs> {
    const { sequences, res } = await this.sampleOnce('sampleWithPromptLogprobs', promptTokens, numSamples, params, true);
    return { sequences, promptLogprobs: promptLogprobsOf(res, promptTokens.length) };
  }

  private async sampleOnce(what: string, promptTokens: number[], numSamples: number, params: SampleParams, promptLogprobs: boolean): Promise<{ sequences: SampledSequence[]; res: SampleResponse }> {
    assertTokens(what, promptTokens);
    if (!Number.isInteger(numSamples) || numSamples < 1) throw new TinkerError(`${what}: numSamples must be a positive integer (got ${numSamples})`);
    if (!Number.isInteger(params.maxTokens) || params.maxTokens < 1) throw new TinkerError(`${what}: maxTokens must be a positive integer (got ${params.maxTokens})`);
    if (!(params.temperature >= 0)) throw new TinkerError(`${what}: temperature must be >= 0 (got ${params.temperature})`);
    const res = await this.asample(promptTokens, numSamples, {
      max_tokens: params.maxTokens,
      temperature: params.temperature,
      top_k: -1,
      top_p: 1,
      ...(params.stopTokens && params.stopTokens.length > 0 ? { stop: params.stopTokens } : {}),
      ...(params.seed !== undefined ? { seed: params.seed } : {}),
    }, promptLogprobs);
    if (res.sequences.length !== numSamples) {
      throw new TinkerError(`asample: asked for ${numSamples} samples, the server returned ${res.sequences.length}`);
    }
    const sequences = res.sequences.map((s, i) => {
      if (!s.logprobs || s.logprobs.length !== s.tokens.length) {
        throw new TinkerError(`asample: sequence ${i} has ${s.logprobs?.length ?? 'no'} logprobs for ${s.tokens.length} tokens`);
      }
      return { tokens: s.tokens, logprobs: s.logprobs, stopReason: s.stop_reason };
    });
    return { sequences, res };
  }

  async computeLogprobs(tokens: number[]): Promise<(number | null)[]> {
    assertTokens('computeLogprobs', tokens);
    const res = await this.asample(tokens, 1, { max_tokens: 1, temperature: 1, top_k: -1, top_p: 1 }, true);
    return promptLogprobsOf(res, tokens.length);
  }

  private async asample(tokens: number[], numSamples: number, samplingParams: Record<string, unknown>, promptLogprobs: boolean): Promise<SampleResponse> {
    await this.core.sessionOf(this.generation, 'asample');
    const waiting = this.core.waitClock('asample');
    for (let resubmit = 0; ; resubmit++) {
      // a resubmitted sample is a new request: a new seq_id, as the SDK's retry handler takes one per submission
      const seq = this.seq++;
      const body = {
        sampling_session_id: this.samplingSessionId,
        seq_id: seq,
        num_samples: numSamples,
        prompt: tokensToModelInput(tokens),
        sampling_params: samplingParams,
        ...(promptLogprobs ? { prompt_logprobs: true } : {}),
        topk_prompt_logprobs: 0,
        type: 'sample',
      };
      try {
        const res = await this.core.submitAndAwait('asample', body, 'Sample', sampleResponseSchema, {
          headers: { 'X-Tinker-Sampling-Backpressure': '1' },
        });
        waiting.done();
        return res;
      } catch (err) {
        // An expired sampling future is resubmitted (sampling has no side effects), as the SDK does: no count
        // limit, only the stuck timeout (waitClock throws TinkerStuckError once the 410s have lasted that long).
        if (!(err instanceof TinkerApiError && err.status === 410)) throw err;
        await this.core.backOff(resubmit, waiting.failed(err), 'asample');
      }
    }
  }
}
