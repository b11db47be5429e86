// The trainer's step ledger: the effect of step N (forward_backward + optim_step) lands on the arm's surviving
// lineage exactly once, in order, and a replay is answered "skipped". See apps/trainer/README.md for the whole
// mechanism.
//
//   claim(N, token):  N <= committed            -> skipped (a replay; the stored record comes back)
//                     N != committed + 1        -> out-of-order (retry later)
//                     a claim on N is held      -> in-doubt (an earlier attempt died or gave up mid-step)
//                     otherwise                 -> claimed (this attempt owns N, phase forward_backward)
//   takeOver(N, token, held)         in doubt: replace the claim `held` by this attempt's (compare-and-set); the
//                                    attempt then redoes N on a fresh client loaded from the state after N-1
//   markPhase(N, token, optim_step)  before optim_step (what the claim was doing when its holder died)
//   release(N, token)                forward_backward threw: nothing was applied, the claim is dropped
//   commit(N, token, record, state)  committed = N, the state saved after N recorded, the claim cleared (atomic)
//   setOrigin / origin               what step 0 starts from (the LoRA config and the shared initial state)
import type { ArmName, LoraSpec, RunId, StepRecord } from '@rx/contracts';

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
  /** the training state saved with the last commit (null before the first) */
  statePath: string | null;
}

/** Where an arm's lineage starts: its LoRA config and the state step 0 loads (null: the fresh seeded init). */
export interface ArmOrigin {
  lora: LoraSpec;
  initStatePath: string | null;
}

/** What a commit stores: the step's record and the training state saved after its optim_step. */
export interface StepCommit {
  record: StepRecord;
  statePath: string;
}

export type ClaimResult =
  | { kind: 'claimed'; committed: number }
  | { kind: 'skipped'; committed: number; record: StepRecord | null }
  | { kind: 'out-of-order'; committed: number }
  | { kind: 'in-doubt'; committed: number; claim: LedgerClaim };

export interface TrainerStepLedger {
  status(key: LedgerKey): Promise<LedgerStatus>;
  claim(key: LedgerKey, step: number, token: string, now: Date): Promise<ClaimResult>;
  /** replaces the claim on `step` held by `heldToken` with this attempt's; false when the claim changed meanwhile */
  takeOver(key: LedgerKey, step: number, token: string, heldToken: string, now: Date): Promise<boolean>;
  markPhase(key: LedgerKey, step: number, token: string, phase: LedgerPhase): Promise<void>;
  release(key: LedgerKey, step: number, token: string): Promise<void>;
  commit(key: LedgerKey, step: number, token: string, commit: StepCommit): Promise<void>;
  record(key: LedgerKey, step: number): Promise<StepRecord | null>;
  /** the training state saved when `step` was committed */
  statePath(key: LedgerKey, step: number): Promise<string | null>;
  /** records the arm's origin unless one is recorded (first writer wins); returns the recorded one */
  setOrigin(key: LedgerKey, origin: ArmOrigin): Promise<ArmOrigin>;
  origin(key: LedgerKey): Promise<ArmOrigin | null>;
}

export class LostClaimError extends Error {
  constructor(key: LedgerKey, step: number, what: string) {
    super(`step ${step} of ${key.runId}/${key.arm}: ${what}: this attempt no longer holds the claim`);
    this.name = 'LostClaimError';
  }
}

interface ArmEntry {
  committed: number;
  claim: LedgerClaim | null;
  records: Map<number, StepRecord>;
  states: Map<number, string>;
  origin: ArmOrigin | null;
}

/** The same contract in memory (the in-process loop, unit tests). */
export class InMemoryTrainerStepLedger implements TrainerStepLedger {
  private readonly arms = new Map<string, ArmEntry>();

  private of(key: LedgerKey): ArmEntry {
    const k = `${key.runId}\u0000${key.arm}`;
    let a = this.arms.get(k);
    if (!a) this.arms.set(k, (a = { committed: -1, claim: null, records: new Map(), states: new Map(), origin: null }));
    return a;
  }

  async status(key: LedgerKey): Promise<LedgerStatus> {
    const a = this.of(key);
    return { committed: a.committed, claim: a.claim ? { ...a.claim } : null, statePath: a.states.get(a.committed) ?? null };
  }

  async claim(key: LedgerKey, step: number, token: string, now: Date): Promise<ClaimResult> {
    const a = this.of(key);
    if (step <= a.committed) return { kind: 'skipped', committed: a.committed, record: a.records.get(step) ?? null };
    if (step !== a.committed + 1) return { kind: 'out-of-order', committed: a.committed };
    if (a.claim) return { kind: 'in-doubt', committed: a.committed, claim: { ...a.claim } };
    a.claim = { step, token, phase: 'forward_backward', since: now.toISOString() };
    return { kind: 'claimed', committed: a.committed };
  }

  async takeOver(key: LedgerKey, step: number, token: string, heldToken: string, now: Date): Promise<boolean> {
    const a = this.of(key);
    if (!a.claim || a.claim.step !== step || a.claim.token !== heldToken) return false;
    a.claim = { step, token, phase: 'forward_backward', since: now.toISOString() };
    return true;
  }

  private held(key: LedgerKey, step: number, token: string, what: string): ArmEntry & { claim: LedgerClaim } {
    const a = this.of(key);
    if (!a.claim || a.claim.step !== step || a.claim.token !== token) throw new LostClaimError(key, step, what);
    return a as ArmEntry & { claim: LedgerClaim };
  }

  async markPhase(key: LedgerKey, step: number, token: string, phase: LedgerPhase): Promise<void> {
    this.held(key, step, token, `mark ${phase}`).claim.phase = phase;
  }

  async release(key: LedgerKey, step: number, token: string): Promise<void> {
    const a: ArmEntry = this.held(key, step, token, 'release');
    if (a.claim?.phase !== 'forward_backward') throw new LostClaimError(key, step, 'release after optim_step began');
    a.claim = null;
  }

  async commit(key: LedgerKey, step: number, token: string, commit: StepCommit): Promise<void> {
    const a: ArmEntry = this.held(key, step, token, 'commit');
    a.committed = step;
    a.claim = null;
    a.records.set(step, structuredClone(commit.record));
    a.states.set(step, commit.statePath);
  }

  async record(key: LedgerKey, step: number): Promise<StepRecord | null> {
    return this.of(key).records.get(step) ?? null;
  }

  async statePath(key: LedgerKey, step: number): Promise<string | null> {
    return this.of(key).states.get(step) ?? null;
  }

  async setOrigin(key: LedgerKey, origin: ArmOrigin): Promise<ArmOrigin> {
    const a = this.of(key);
    a.origin ??= structuredClone(origin);
    return structuredClone(a.origin);
  }

  async origin(key: LedgerKey): Promise<ArmOrigin | null> {
    const o = this.of(key).origin;
    return o ? structuredClone(o) : null;
  }
}
