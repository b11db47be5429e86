// What the server serves and has saved: get_server_capabilities, weights_info, and the signed archive URLs of
// saved checkpoints (GET …/archive, then the public archives/:token download).
import { randomBytes } from 'node:crypto';
import { Injectable, NotFoundException } from '@nestjs/common';
import { formatTinkerPath, parseTinkerPath, weightsInfoRequestSchema, writeCheckpointArchive, type PolicyBackend } from '@rx/backend';
import { apiError, parseRequest } from './api-error';
import { ARCHIVE_DOWNLOAD_PREFIX } from './auth';
import { PolicyServerContext } from './policy-server.context';

/** how long a checkpoint archive's URL is valid (the SDK assumes 15 minutes when a 302 carries no Expires) */
const ARCHIVE_URL_TTL_MS = 15 * 60_000;

@Injectable()
export class CheckpointsService {
  /** signed archive URLs handed out: token -> the backend's checkpoint path, until it expires */
  private readonly archives = new Map<string, { backendPath: string; expiresAt: number }>();

  constructor(private readonly ctx: PolicyServerContext) {}

  /** The served models, each with the largest LoRA rank create_model takes (an rx field the SDK ignores). */
  async getServerCapabilities(): Promise<Record<string, unknown>> {
    const { config, backend, limits } = this.ctx;
    const unserved = config.hostedLike?.faults.unserved_models ?? [];
    const names = (backend.supportedModels?.() ?? []).filter((n) => !unserved.includes(n));
    const models = await Promise.all(
      names.map(async (model_name) => {
        const modelLimits = await limits.of('get_server_capabilities', model_name).catch(() => undefined);
        const max_lora_rank = Math.min(config.maxLoraRank, modelLimits?.maxLoraRank ?? Number.POSITIVE_INFINITY);
        return { model_name, max_context_length: config.maxTokensPerRequest, ...(Number.isFinite(max_lora_rank) ? { max_lora_rank } : {}) };
      }),
    );
    return { supported_models: models };
  }

  /**
   * get_checkpoint_archive_url: a signed URL of the archive of a checkpoint this server saved, valid
   * ARCHIVE_URL_TTL_MS: RX_POLICY_PUBLIC_URL when set, else `origin` (the request's protocol and Host), then
   * ARCHIVE_DOWNLOAD_PREFIX and a random token. In the hosted-like mode with no_archive_route, a 404 as for a route
   * the server does not have.
   */
  checkpointArchiveUrl(runId: string, kind: string, name: string, url: string, origin: string): { location: string; expires: Date } {
    const { config, backend, paths } = this.ctx;
    if (config.hostedLike?.no_archive_route) throw new NotFoundException(`Cannot GET ${url}`);
    if (kind !== 'weights' && kind !== 'sampler_weights') throw apiError(400, `archive: '${kind}' is not a checkpoint kind (weights or sampler_weights)`);
    const tinkerPath = formatTinkerPath({ runId, kind, name });
    const entry = paths.get(tinkerPath);
    if (!entry) throw apiError(404, `archive: no checkpoint at '${tinkerPath}'`);
    if (!backend.adapterWeights) throw apiError(501, `archive: the ${backend.kind} backend of this server cannot hand out checkpoint bytes`);
    const now = Date.now();
    for (const [t, a] of this.archives) if (a.expiresAt <= now) this.archives.delete(t);
    const token = randomBytes(32).toString('hex');
    const expires = new Date(now + ARCHIVE_URL_TTL_MS);
    this.archives.set(token, { backendPath: entry.backendPath, expiresAt: expires.getTime() });
    return { location: `${config.publicUrl ?? origin}${ARCHIVE_DOWNLOAD_PREFIX}${token}`, expires };
  }

  /** The archive (tar) behind a token of checkpointArchiveUrl; 404 once it has expired or for a token never given. */
  async archiveBytes(token: string): Promise<Uint8Array> {
    const a = this.archives.get(token);
    if (!a || a.expiresAt <= Date.now()) throw apiError(404, 'archive: this URL is unknown or has expired; ask GET …/archive again');
    return writeCheckpointArchive(await (this.ctx.backend.adapterWeights as NonNullable<PolicyBackend['adapterWeights']>)(a.backendPath));
  }

  /** weights_info: what create_training_client_from_state needs to make a matching LoRA client. */
  weightsInfo(body: unknown): Record<string, unknown> {
    const req = parseRequest('weights_info', weightsInfoRequestSchema, body);
    if (parseTinkerPath(req.tinker_path)?.kind !== 'weights') {
      throw apiError(400, `weights_info: '${req.tinker_path}' is not a tinker://<run>/weights/<name> path from save_weights`);
    }
    const entry = this.ctx.paths.get(req.tinker_path);
    if (!entry) throw apiError(404, `weights_info: no training state at '${req.tinker_path}'`);
    if (entry.loraRank === undefined) throw apiError(404, `weights_info: '${req.tinker_path}' was saved before this server recorded LoRA ranks`);
    return { base_model: entry.baseModel, is_lora: true, lora_rank: entry.loraRank, train_unembed: true, train_mlp: true, train_attn: true };
  }
}
