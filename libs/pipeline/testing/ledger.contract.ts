// TEST CONTRACT. The behaviour every TrainerStepLedger shares (run against the in-memory and the Redis one).
import type { StepRecord } from '@rx/contracts';
import { LostClaimError, type TrainerStepLedger } from '@rx/pipeline';

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

/** a commit of step `step` with its record and the state saved after it */
export function stepCommit(step: number, loss = -1.25): { record: StepRecord; statePath: string } {
  return { record: stepRecord(step, loss), statePath: `memory://state/${step}` };
}

export function describeLedgerContract(name: string, make: () => TrainerStepLedger | Promise<TrainerStepLedger>): void {
  describe(`${name} (TrainerStepLedger contract)`, () => {
    const key = { runId: 'run-a', arm: 'grpo_gs8' };
    const now = new Date('2026-08-01T00:00:00Z');

    it('applies steps in order: claim, optim phase, commit; a replay is skipped with its record', async () => {
      const ledger = await make();
      expect(await ledger.status(key)).toEqual({ committed: -1, claim: null, statePath: null });
      expect(await ledger.claim(key, 0, 'a1', now)).toEqual({ kind: 'claimed', committed: -1 });
      expect((await ledger.status(key)).claim).toEqual({ step: 0, token: 'a1', phase: 'forward_backward', since: now.toISOString() });
      await ledger.markPhase(key, 0, 'a1', 'optim_step');
      await ledger.commit(key, 0, 'a1', stepCommit(0));
      expect(await ledger.status(key)).toEqual({ committed: 0, claim: null, statePath: 'memory://state/0' });
      expect(await ledger.claim(key, 0, 'a2', now)).toEqual({ kind: 'skipped', committed: 0, record: stepRecord(0) });
      expect(await ledger.record(key, 0)).toEqual(stepRecord(0));
    });

    it('names the state saved with each commit, step by step', async () => {
      const ledger = await make();
      for (const step of [0, 1, 2]) {
        await ledger.claim(key, step, `t${step}`, now);
        await ledger.commit(key, step, `t${step}`, { record: stepRecord(step), statePath: `memory://s/${step}` });
      }
      expect(await Promise.all([0, 1, 2, 3].map((s) => ledger.statePath(key, s)))).toEqual(['memory://s/0', 'memory://s/1', 'memory://s/2', null]);
      expect((await ledger.status(key)).statePath).toBe('memory://s/2');
    });

    it('lets an attempt take over an in-doubt claim once (compare-and-set), fencing the old holder out', async () => {
      const ledger = await make();
      await ledger.claim(key, 0, 'dead', now);
      await ledger.markPhase(key, 0, 'dead', 'optim_step');
      const later = new Date('2026-08-01T00:05:00Z');
      const doubt = await ledger.claim(key, 0, 'b', later);
      expect(doubt).toMatchObject({ kind: 'in-doubt', claim: { token: 'dead', phase: 'optim_step' } });
      const races = await Promise.all(['b', 'c', 'd'].map((t) => ledger.takeOver(key, 0, t, 'dead', later)));
      expect(races.filter(Boolean)).toHaveLength(1);
      const winner = ['b', 'c', 'd'][races.indexOf(true)];
      expect((await ledger.status(key)).claim).toEqual({ step: 0, token: winner, phase: 'forward_backward', since: later.toISOString() });
      // the dead holder cannot commit, mark or release any more
      await expect(ledger.commit(key, 0, 'dead', stepCommit(0))).rejects.toBeInstanceOf(LostClaimError);
      await expect(ledger.markPhase(key, 0, 'dead', 'optim_step')).rejects.toBeInstanceOf(LostClaimError);
      expect(await ledger.takeOver(key, 0, 'e', 'dead', later)).toBe(false);
      expect(await ledger.takeOver(key, 1, 'e', winner, later)).toBe(false);
      await ledger.commit(key, 0, winner, stepCommit(0));
      expect(await ledger.status(key)).toEqual({ committed: 0, claim: null, statePath: 'memory://state/0' });
      expect(await ledger.takeOver(key, 0, 'f', winner, later)).toBe(false);
    });

    it('keeps the first origin recorded for an arm', async () => {
      const ledger = await make();
      expect(await ledger.origin(key)).toBeNull();
      const origin = { lora: { baseModel: 'rx/char-lm', rank: 32, seed: 0 }, initStatePath: 'memory://init' };
      expect(await ledger.setOrigin(key, origin)).toEqual(origin);
      expect(await ledger.setOrigin(key, { lora: { baseModel: 'other', rank: 8, seed: 1 }, initStatePath: null })).toEqual(origin);
      expect(await ledger.origin(key)).toEqual(origin);
      expect(await ledger.origin({ runId: 'run-a', arm: 'gs1_kernel' })).toBeNull();
    });

    it('refuses a step whose predecessor is not committed', async () => {
      const ledger = await make();
      expect(await ledger.claim(key, 1, 'a1', now)).toEqual({ kind: 'out-of-order', committed: -1 });
      expect(await ledger.status(key)).toEqual({ committed: -1, claim: null, statePath: null });
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
      await expect(ledger.commit(key, 0, 'intruder', stepCommit(0))).rejects.toBeInstanceOf(LostClaimError);
      await expect(ledger.commit(key, 1, 'a1', stepCommit(1))).rejects.toBeInstanceOf(LostClaimError);
      expect(await ledger.status(key)).toMatchObject({ committed: -1, claim: { token: 'a1' }, statePath: null });
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
      await ledger.commit(key, 0, 'a', stepCommit(0));
      expect(await ledger.claim({ runId: 'run-a', arm: 'gs1_kernel' }, 0, 'b', now)).toMatchObject({ kind: 'claimed', committed: -1 });
    });
  });
}
