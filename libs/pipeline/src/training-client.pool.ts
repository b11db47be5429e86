// The trainer's training clients, one per (run, arm), each known to hold the state after a committed step.
// A client the pool does not have (a restarted trainer, a client discarded after a failure or a take-over) is
// created again from the ledger: the arm's LoRA config, then loadState of the state saved with the last commit
// (or the arm's initial state before its first). A fresh client carries nothing a dead attempt accumulated, so
// the step redone on it reaches the optimizer once on the lineage that survives.
import type { PolicyBackend, TrainingClient } from '@rx/backend';
import { UnrecoverableStageError } from './stage-errors';
import type { LedgerKey, TrainerStepLedger } from './trainer-step.ledger';

interface PoolEntry {
  /** the committed step whose state the client holds (-1: the arm's origin) */
  atStep: number;
  client: Promise<TrainingClient>;
  resolved?: TrainingClient;
}

export class TrainingClientPool {
  private readonly arms = new Map<string, PoolEntry>();
  private restoredCount = 0;
  private createdCount = 0;

  constructor(
    private readonly backend: PolicyBackend,
    private readonly ledger: Pick<TrainerStepLedger, 'origin' | 'statePath'>,
  ) {}

  private static id(key: LedgerKey): string {
    return `${key.runId}\u0000${key.arm}`;
  }

  /** clients created so far, and how many of them were loaded from a committed step's state */
  get stats(): { created: number; restored: number } {
    return { created: this.createdCount, restored: this.restoredCount };
  }

  /**
   * The arm's client holding the state after `committed` (-1: the arm's origin): the pooled one when it is there,
   * otherwise a new client loaded from the ledger.
   */
  at(key: LedgerKey, committed: number): Promise<TrainingClient> {
    const id = TrainingClientPool.id(key);
    const existing = this.arms.get(id);
    if (existing && existing.atStep === committed) return existing.client;
    const entry: PoolEntry = { atStep: committed, client: this.create(key, committed) };
    entry.client.then(
      (c) => (entry.resolved = c),
      () => {
        if (this.arms.get(id) === entry) this.arms.delete(id);
      },
    );
    this.arms.set(id, entry);
    return entry.client;
  }

  private async create(key: LedgerKey, committed: number): Promise<TrainingClient> {
    const where = `${key.runId}/${key.arm}`;
    const origin = await this.ledger.origin(key);
    if (!origin) {
      throw new UnrecoverableStageError(`no origin recorded for ${where}: its first step request never reached the trainer, so there is no LoRA config to train`);
    }
    const statePath = committed >= 0 ? await this.ledger.statePath(key, committed) : origin.initStatePath;
    if (committed >= 0 && !statePath) {
      throw new UnrecoverableStageError(`step ${committed} of ${where} was committed without a saved training state: the arm cannot be resumed`);
    }
    const client = await this.backend.createLoraTrainingClient(origin.lora);
    if (statePath) await client.loadState(statePath);
    this.createdCount++;
    if (committed >= 0) this.restoredCount++;
    return client;
  }

  /**
   * The client is no longer trusted (a call on it failed, or another attempt took its step over): the next at()
   * builds a fresh one. Without `client`, whatever the pool holds for the arm is dropped.
   */
  discard(key: LedgerKey, client?: TrainingClient): void {
    const id = TrainingClientPool.id(key);
    const entry = this.arms.get(id);
    if (entry && (client === undefined || entry.resolved === client)) this.arms.delete(id);
  }

  /** `client` applied and committed `step`: it now holds the state after it. */
  advanced(key: LedgerKey, client: TrainingClient, step: number): void {
    const id = TrainingClientPool.id(key);
    const entry = this.arms.get(id);
    if (entry && entry.atStep >= step && entry.resolved !== client) return;
    this.arms.set(id, { atStep: step, client: Promise.resolve(client), resolved: client });
  }
}
