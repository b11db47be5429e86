// The parts of the training loop the correctness preflight checks: the advantage stage (the arm's estimator over
// a batch and its window) and the trainer's Datums. Production runs libs/pipeline's own functions; the mutation
// test passes wrappers that inject known bugs, so the checks are shown to fail on them.
import type { Datum } from '@rx/backend';
import type { GradedBatch, TrainStep } from '@rx/contracts';
import { computeAdvantages, datumsOf, type AdvantageStageDeps } from '@rx/pipeline';

export interface LoopUnderTest {
  computeAdvantages(batch: GradedBatch, deps: AdvantageStageDeps): Promise<TrainStep>;
  datumsOf(step: TrainStep): Datum[];
}

export const RX_LOOP: LoopUnderTest = { computeAdvantages, datumsOf };
