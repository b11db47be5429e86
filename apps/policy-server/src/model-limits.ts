// What a request may ask of the models, checked before any work starts, so that a caller's out-of-range value is
// a 400 (the client reports it as category 'user') instead of a future that fails with category 'server': LoRA
// rank (this server's RX_POLICY_MAX_LORA_RANK and the backend's own limit), seeds (safe integers), token ids
// (inside the base model's vocabulary), sequence lengths (within its context), and the live-model bound.
import type { ModelLimits, PolicyBackend } from '@rx/backend';
import { apiError } from './api-error';
import type { PolicyServerConfig } from './config';
import { errorCategory } from './futures.store';

export class ModelLimitChecks {
  private readonly limits = new Map<string, Promise<ModelLimits | undefined>>();

  constructor(
    private readonly backend: PolicyBackend,
    private readonly config: Pick<PolicyServerConfig, 'maxModels' | 'maxLoraRank'>,
  ) {}

  /** The base model's limits (asked once per base model); undefined when the backend does not announce them. */
  async of(endpoint: string, baseModel: string): Promise<ModelLimits | undefined> {
    let limits = this.limits.get(baseModel);
    if (!limits) {
      limits = this.backend.modelLimits ? this.backend.modelLimits(baseModel) : Promise.resolve(undefined);
      this.limits.set(baseModel, limits);
      limits.catch(() => this.limits.delete(baseModel));
    }
    try {
      return await limits;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw apiError(errorCategory(err) === 'user' ? 400 : 500, `${endpoint}: ${message}`);
    }
  }

  /** create_model: a served base model, a rank within both limits, a safe-integer seed. */
  async checkNewModel(baseModel: string, rank: number, seed: number | null | undefined): Promise<void> {
    const limits = await this.of('create_model', baseModel);
    const maxRank = Math.min(this.config.maxLoraRank, limits?.maxLoraRank ?? Number.POSITIVE_INFINITY);
    if (rank > maxRank) {
      const which = maxRank === this.config.maxLoraRank ? ' (RX_POLICY_MAX_LORA_RANK)' : ` (the limit of ${baseModel})`;
      throw apiError(400, `create_model: lora_config.rank ${rank} is above this server's limit of ${maxRank}${which}`);
    }
    checkSeed('create_model', 'lora_config.seed', seed);
  }

  /** Throws 429 when `liveModels` already fill RX_POLICY_MAX_MODELS. */
  checkRoom(liveModels: number): void {
    if (liveModels >= this.config.maxModels) {
      throw apiError(429, `create_model: ${liveModels} models are alive; this server holds at most ${this.config.maxModels} (RX_POLICY_MAX_MODELS): unload_model one first`);
    }
  }

  /** Every token id inside the base model's vocabulary and every sequence within its context. */
  async checkSequences(endpoint: string, baseModel: string, sequences: ReadonlyArray<{ what: string; tokens: readonly number[] }>): Promise<void> {
    const limits = await this.of(endpoint, baseModel);
    if (!limits) return;
    for (const { what, tokens } of sequences) {
      if (tokens.length > limits.contextLength) {
        throw apiError(400, `${endpoint}: ${what} holds ${tokens.length} tokens; ${baseModel} takes at most ${limits.contextLength}`);
      }
      const bad = tokens.find((t) => !Number.isInteger(t) || t < 0 || t >= limits.vocabSize);
      if (bad !== undefined) {
        throw apiError(400, `${endpoint}: ${what} has token id ${bad}, outside the vocabulary of ${baseModel} (0..${limits.vocabSize - 1})`);
      }
    }
  }
}

/** A seed, when given, is a safe integer (a larger one has lost precision on the way, in JSON). */
export function checkSeed(endpoint: string, field: string, seed: number | null | undefined): void {
  if (seed === undefined || seed === null) return;
  if (!Number.isSafeInteger(seed)) {
    throw apiError(400, `${endpoint}: ${field} ${seed} is not a safe integer (at most ${Number.MAX_SAFE_INTEGER} in magnitude)`);
  }
}
