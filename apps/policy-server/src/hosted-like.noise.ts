// Hosted-like logprob noise: a GPU service's logprobs of one input move with the batch the request shares with other
// traffic (batch size and composition pick other kernels and reduction orders), about 1e-3. Modelled per request:
// a draw that depends on the request's own batch (its tokens) and on the co-batch it landed in (a counter of the
// requests this server has run, standing for the other traffic), uniform in ±amplitude per target, rounded to
// float32 as a GPU's logprobs are; the loss is recomputed from the moved logprobs, as the service's own would be.
import { createHash } from 'node:crypto';
import { importanceSamplingLoss, type Datum, type ForwardBackwardResult } from '@rx/backend';
import { mulberry32 } from '@rx/stats';

export class LogprobNoise {
  private requests = 0;

  constructor(
    readonly amplitude: number,
    private readonly seed: number,
  ) {}

  apply(datums: readonly Datum[], exact: ForwardBackwardResult): ForwardBackwardResult {
    const composition = createHash('sha256');
    for (const d of datums) composition.update(Int32Array.from(d.inputTokens)).update('|');
    composition.update(`#${this.requests++}#${this.seed}`);
    const rand = mulberry32(composition.digest().readUInt32LE(0));
    const logprobs = exact.logprobs.map((row) => row.map((x) => Math.fround(x + this.amplitude * (2 * rand() - 1))));
    return { loss: importanceSamplingLoss(datums as Datum[], logprobs), logprobs };
  }
}
