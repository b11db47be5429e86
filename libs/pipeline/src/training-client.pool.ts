// The trainer's training clients, one per (run, arm), created on the arm's first step request.
import type { PolicyBackend, TrainingClient } from '@rx/backend';
import type { LoraSpec } from '@rx/contracts';
import type { LedgerKey } from './trainer-step.ledger';
import { UnrecoverableStageError } from './stage-errors';

export class TrainingClientPool {
  private readonly clients = new Map<string, Promise<TrainingClient>>();

  constructor(private readonly backend: PolicyBackend) {}

  private static id(key: LedgerKey): string {
    return `${key.runId}\u0000${key.arm}`;
  }

  /**
   * The arm's client; created (and initialised from initStatePath) when the arm has committed no step yet.
   * After a trainer restart mid-run the client's weights are gone: that refuses rather than train fresh weights.
   */
  acquire(key: LedgerKey, lora: LoraSpec, initStatePath: string | undefined, committed: number): Promise<TrainingClient> {
    const id = TrainingClientPool.id(key);
    const existing = this.clients.get(id);
    if (existing) return existing;
    if (committed >= 0) return Promise.reject(this.gone(key, committed));
    const created = (async () => {
      const client = await this.backend.createLoraTrainingClient(lora);
      if (initStatePath) await client.loadState(initStatePath);
      return client;
    })();
    this.clients.set(id, created);
    created.catch(() => this.clients.delete(id));
    return created;
  }

  /** The client of an arm that has started (train-steps never create one). */
  existing(key: LedgerKey, committed: number): Promise<TrainingClient> {
    return this.clients.get(TrainingClientPool.id(key)) ?? Promise.reject(this.gone(key, committed));
  }

  private gone(key: LedgerKey, committed: number): UnrecoverableStageError {
    return new UnrecoverableStageError(
      `no training client for ${key.runId}/${key.arm} (last committed step ${committed}): the trainer restarted mid-run ` +
        'and its weights are gone; resume the arm from a saved state',
    );
  }
}
