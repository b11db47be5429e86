// The trainer's step ledger: the effect of step N (forward_backward + optim_step) is applied at most once,
// in order, and a replay is answered "skipped". See apps/trainer/README.md for the whole mechanism.
//
//   claim(N, token):  N <= committed            -> skipped (a replay; the stored record comes back)
//                     N != committed + 1        -> out-of-order (retry later)
//                     a claim on N is held      -> in-doubt (an earlier attempt may have applied it: stop)
//                     otherwise                 -> claimed (this attempt owns N, phase forward_backward)
//   markPhase(N, token, optim_step)  before optim_step: from here a failure leaves N in doubt
//   release(N, token)                forward_backward threw: nothing was applied, the claim is dropped
//   commit(N, token, record)         committed = N, the claim cleared, the record stored (one atomic step)
import type { ArmName, RunId, StepRecord } from '@rx/contracts';

export interface LedgerKey {
  runId: RunId;
  arm: ArmName;
}

export type LedgerPhase = 'forward_backward' | 'optim_step';

export interface LedgerClaim {
  step: number;
  token: string;
  phase: LedgerPhase;
  since: string;
}

export interface LedgerStatus {
  /** the last committed step, -1 before the first */
  committed: number;
  /** an attempt that claimed committed + 1 and has not committed it */
  claim: LedgerClaim | null;
}

export type ClaimResult =
  | { kind: 'claimed'; committed: number }
  | { kind: 'skipped'; committed: number; record: StepRecord | null }
  | { kind: 'out-of-order'; committed: number }
  | { kind: 'in-doubt'; committed: number; claim: LedgerClaim };

export interface TrainerStepLedger {
  status(key: LedgerKey): Promise<LedgerStatus>;
  claim(key: LedgerKey, step: number, token: string, now: Date): Promise<ClaimResult>;
  markPhase(key: LedgerKey, step: number, token: string, phase: LedgerPhase): Promise<void>;
  release(key: LedgerKey, step: number, token: string): Promise<void>;
  commit(key: LedgerKey, step: number, token: string, record: StepRecord): Promise<void>;
  record(key: LedgerKey, step: number): Promise<StepRecord | null>;
}

export class LostClaimError extends Error {
  constructor(key: LedgerKey, step: number, what: string) {
    super(`step ${step} of ${key.runId}/${key.arm}: ${what}: this attempt no longer holds the claim`);
    this.name = 'LostClaimError';
  }
}

/** The same contract in memory (the in-process loop, unit tests). */
export class InMemoryTrainerStepLedger implements TrainerStepLedger {
  private readonly arms = new Map<string, { committed: number; claim: LedgerClaim | null; records: Map<number, StepRecord> }>();

  private of(key: LedgerKey) {
    const k = `${key.runId}\u0000${key.arm}`;
    let a = this.arms.get(k);
    if (!a) this.arms.set(k, (a = { committed: -1, claim: null, records: new Map() }));
    return a;
  }

  async status(key: LedgerKey): Promise<LedgerStatus> {
    const a = this.of(key);
    return { committed: a.committed, claim: a.claim ? { ...a.claim } : null };
  }

  async claim(key: LedgerKey, step: number, token: string, now: Date): Promise<ClaimResult> {
    const a = this.of(key);
    if (step <= a.committed) return { kind: 'skipped', committed: a.committed, record: a.records.get(step) ?? null };
    if (step !== a.committed + 1) return { kind: 'out-of-order', committed: a.committed };
    if (a.claim) return { kind: 'in-doubt', committed: a.committed, claim: { ...a.claim } };
    a.claim = { step, token, phase: 'forward_backward', since: now.toISOString() };
    return { kind: 'claimed', committed: a.committed };
  }

  private held(key: LedgerKey, step: number, token: string, what: string) {
    const a = this.of(key);
    if (!a.claim || a.claim.step !== step || a.claim.token !== token) throw new LostClaimError(key, step, what);
    return a;
  }

  async markPhase(key: LedgerKey, step: number, token: string, phase: LedgerPhase): Promise<void> {
    this.held(key, step, token, `mark ${phase}`).claim!.phase = phase;
  }

  async release(key: LedgerKey, step: number, token: string): Promise<void> {
    const a = this.held(key, step, token, 'release');
    if (a.claim!.phase !== 'forward_backward') throw new LostClaimError(key, step, 'release after optim_step began');
    a.claim = null;
  }

  async commit(key: LedgerKey, step: number, token: string, record: StepRecord): Promise<void> {
    const a = this.held(key, step, token, 'commit');
    a.committed = step;
    a.claim = null;
    a.records.set(step, structuredClone(record));
  }

  async record(key: LedgerKey, step: number): Promise<StepRecord | null> {
    return this.of(key).records.get(step) ?? null;
  }
}
