// sampler, on `sample-requests`: render each prompt, then ask the backend for its completions and its prompt-token
// logprobs (phi): one request per prompt where the client can answer both at once (Tinker's asample with
// prompt_logprobs), two otherwise; every request of the batch in flight together (at most `concurrency` at once).
import type { PolicyBackend, Renderer, SampledSequence } from '@rx/backend';
import { compactFloat32Array, type SampleRequest, type SampledBatch, type SampledRollout } from '@rx/contracts';
import { mapConcurrent } from '../map-concurrent';

export interface SampleStageDeps {
  backend: PolicyBackend;
  renderer: Renderer;
  /** backend requests in flight at most */
  concurrency: number;
  now?: () => number;
}

// phi = (ln P, (1/(P-1)) sum_{t=1}^{P-1} logprob(p_t | p_<t)), P = prompt token count (the first token has none)
export function promptPhi(promptTokens: readonly number[], logprobs: ReadonlyArray<number | null>): [number, number] {
  if (logprobs.length !== promptTokens.length) throw new RangeError(`${promptTokens.length} prompt tokens but ${logprobs.length} logprobs`);
  const scored = logprobs.filter((l): l is number => l !== null);
  if (scored.length === 0) throw new RangeError('phi needs a prompt of at least 2 tokens');
  let sum = 0;
  for (const l of scored) sum += l;
  return [Math.log(promptTokens.length), sum / scored.length];
}

type Request = { kind: 'logprobs'; prompt: number } | { kind: 'sample'; prompt: number };

export async function sampleBatch(req: SampleRequest, deps: SampleStageDeps): Promise<SampledBatch> {
  const now = deps.now ?? Date.now;
  const started = now();
  const { plan } = req;
  const client = await deps.backend.createSamplingClient(req.samplerPath);
  const promptTokens = req.prompts.map((p) => deps.renderer.buildPrompt(p.question));

  const phis = new Array<[number, number]>(req.prompts.length);
  const samples = new Array<SampledSequence[]>(req.prompts.length);
  const params = (prompt: number) => ({
    maxTokens: plan.sampling.maxTokens,
    temperature: plan.sampling.temperature,
    stopTokens: deps.renderer.stopTokens,
    seed: plan.sampling.seed + prompt,
  });
  const keep = (prompt: number, seqs: SampledSequence[]) => {
    if (seqs.length !== plan.groupSize) throw new Error(`backend returned ${seqs.length} samples for prompt ${prompt}, asked for ${plan.groupSize}`);
    samples[prompt] = seqs;
  };
  // all queued at once; the limiter decides how many run
  const both = client.sampleWithPromptLogprobs?.bind(client);
  if (both) {
    await mapConcurrent(promptTokens.map((_, i) => i), deps.concurrency, async (i) => {
      const r = await both(promptTokens[i], plan.groupSize, params(i));
      phis[i] = promptPhi(promptTokens[i], r.promptLogprobs);
      keep(i, r.sequences);
    });
  } else {
    const requests: Request[] = req.prompts.flatMap((_, i) => [
      { kind: 'logprobs', prompt: i } as const,
      { kind: 'sample', prompt: i } as const,
    ]);
    await mapConcurrent(requests, deps.concurrency, async (r) => {
      const tokens = promptTokens[r.prompt];
      if (r.kind === 'logprobs') phis[r.prompt] = promptPhi(tokens, await client.computeLogprobs(tokens));
      else keep(r.prompt, await client.sample(tokens, plan.groupSize, params(r.prompt)));
    });
  }

  const rollouts: SampledRollout[] = [];
  req.prompts.forEach((p, i) => {
    samples[i].forEach((seq, j) => {
      if (seq.tokens.length !== seq.logprobs.length) throw new Error(`sample ${j} of prompt ${i}: ${seq.tokens.length} tokens but ${seq.logprobs.length} logprobs`);
      rollouts.push({
        rolloutId: `${req.step}-${i * plan.groupSize + j}`,
        promptId: p.promptId,
        tokens: seq.tokens,
        logprobs: compactFloat32Array(seq.logprobs),
        stopReason: seq.stopReason,
        phi: phis[i],
      });
    });
  });
  return {
    runId: req.runId,
    arm: req.arm,
    step: req.step,
    plan,
    samplerPath: req.samplerPath,
    prompts: req.prompts.map((p, i) => ({ promptId: p.promptId, tokens: promptTokens[i], answer: p.answer })),
    rollouts,
    timings: { sample: (now() - started) / 1000 },
  };
}
