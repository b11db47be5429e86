// TEST CONTRACT. The behaviour every TrainerStepLedger shares (run against the in-memory and the Redis one).
import type { StepRecord } from '@rx/contracts';
import { LostClaimError, type TrainerStepLedger } from '../trainer-step.ledger';

export function stepRecord(step: number, loss = -1.25): StepRecord {
  return {
    runId: 'run-a',
    arm: 'grpo_gs8',
    step,
    estimator: 'group_mean',
    rollouts: [],
    datums: 64,
    loss,
    optimizerStep: step + 1,
    learningRate: 4e-5,
    gate: { executedGroupSize: 8, rewardMean: 0.5, fracNonzeroAdvantage: 0.75, effectiveNeighbors: { p10: 7, p50: 7, p90: 7 }, fallbackFraction: 0 },
    timings: { train: 1.5 },
    samplerPath: 'memory://x',
    committedAt: '2026-08-01T00:00:00.000Z',
  };
}

export function describeLedgerContract(name: string, make: () => TrainerStepLedger | Promise<TrainerStepLedger>): void {
  describe(`${name} (TrainerStepLedger contract)`, () => {
    const key = { runId: 'run-a', arm: 'grpo_gs8' };
    const now = new Date('2026-08-01T00:00:00Z');

    it('applies steps in order: claim, optim phase, commit; a replay is skipped with its record', async () => {
      const ledger = await make();
      expect(await ledger.status(key)).toEqual({ committed: -1, claim: null });
      expect(await ledger.claim(key, 0, 'a1', now)).toEqual({ kind: 'claimed', committed: -1 });
      expect((await ledger.status(key)).claim).toEqual({ step: 0, token: 'a1', phase: 'forward_backward', since: now.toISOString() });
      await ledger.markPhase(key, 0, 'a1', 'optim_step');
      await ledger.commit(key, 0, 'a1', stepRecord(0));
      expect(await ledger.status(key)).toEqual({ committed: 0, claim: null });
      expect(await ledger.claim(key, 0, 'a2', now)).toEqual({ kind: 'skipped', committed: 0, record: stepRecord(0) });
      expect(await ledger.record(key, 0)).toEqual(stepRecord(0));
    });

    it('refuses a step whose predecessor is not committed', async () => {
      const ledger = await make();
      expect(await ledger.claim(key, 1, 'a1', now)).toEqual({ kind: 'out-of-order', committed: -1 });
      expect(await ledger.status(key)).toEqual({ committed: -1, claim: null });
    });

    it('answers in-doubt while a claim on the step is held, whatever the phase', async () => {
      const ledger = await make();
      await ledger.claim(key, 0, 'a1', now);
      expect(await ledger.claim(key, 0, 'a2', now)).toMatchObject({ kind: 'in-doubt', committed: -1, claim: { step: 0, token: 'a1', phase: 'forward_backward' } });
      await ledger.markPhase(key, 0, 'a1', 'optim_step');
      expect(await ledger.claim(key, 0, 'a3', now)).toMatchObject({ kind: 'in-doubt', claim: { phase: 'optim_step' } });
    });

    it('lets a forward_backward failure release the claim, but not once optim_step began', async () => {
      const ledger = await make();
      await ledger.claim(key, 0, 'a1', now);
      await ledger.release(key, 0, 'a1');
      expect(await ledger.claim(key, 0, 'a2', now)).toMatchObject({ kind: 'claimed' });
      await ledger.markPhase(key, 0, 'a2', 'optim_step');
      await expect(ledger.release(key, 0, 'a2')).rejects.toBeInstanceOf(LostClaimError);
    });

    it('accepts phase, release and commit only from the attempt holding the claim', async () => {
      const ledger = await make();
      await ledger.claim(key, 0, 'a1', now);
      await expect(ledger.markPhase(key, 0, 'intruder', 'optim_step')).rejects.toBeInstanceOf(LostClaimError);
      await expect(ledger.commit(key, 0, 'intruder', stepRecord(0))).rejects.toBeInstanceOf(LostClaimError);
      await expect(ledger.commit(key, 1, 'a1', stepRecord(1))).rejects.toBeInstanceOf(LostClaimError);
      expect(await ledger.status(key)).toMatchObject({ committed: -1, claim: { token: 'a1' } });
    });

    it('gives exactly one of many concurrent claims of a step', async () => {
      const ledger = await make();
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => ledger.claim(key, 0, `t${i}`, now)));
      expect(results.filter((r) => r.kind === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'in-doubt')).toHaveLength(7);
    });

    it('keeps arms apart', async () => {
      const ledger = await make();
      await ledger.claim(key, 0, 'a', now);
      await ledger.commit(key, 0, 'a', stepRecord(0));
      expect(await ledger.claim({ runId: 'run-a', arm: 'gs1_kernel' }, 0, 'b', now)).toMatchObject({ kind: 'claimed', committed: -1 });
    });
  });
}
