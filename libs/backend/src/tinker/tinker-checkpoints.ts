// A checkpoint's bytes and metadata over the wire, through the SDK's RestClient routes:
//   GET  /api/v1/training_runs/{run id}/checkpoints/{weights|sampler_weights}/{name}/archive
//        -> 302 with Location (the service today) or 200 {url, expires} (the SDK's "future" contract): a URL to the
//           archive, fetched WITHOUT the API key (a signed URL, possibly on another host);
//   POST /api/v1/weights_info {tinker_path} -> {base_model, is_lora, lora_rank, train_*}.
// A service that hands out no bytes (the route answers 404, 405 or 501, or the URL does not give an archive with an
// adapter) is CheckpointBytesUnavailableError, which says so in one line; every other failure is thrown as it is.
import { TinkerApiError, TinkerError } from './tinker-errors';
import type { TinkerCore } from './tinker-core';
import { parseTinkerPath } from './tinker-path';
import { CheckpointArchiveError, readCheckpointArchive, type ArchiveAdapter } from './checkpoint-archive';
import { TINKER_API_PREFIX, checkpointArchiveUrlResponseSchema, weightsInfoResponseSchema, type WeightsInfo } from './tinker-wire.schema';

/** statuses by which a service says it has no such route or will not hand the bytes out */
const NO_BYTES = new Set([403, 404, 405, 410, 501]);
/** one download of an archive may take this long */
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

/** The service does not give this checkpoint's bytes: `route` answered `status` (null: the download itself failed). */
export class CheckpointBytesUnavailableError extends TinkerError {
  override name = 'CheckpointBytesUnavailableError';
  constructor(
    readonly route: string,
    readonly status: number | null,
    readonly reason: string,
  ) {
    super(reason);
  }
}

export interface CheckpointAdapter extends ArchiveAdapter {
  tinkerPath: string;
  /** the route asked (GET …/archive) */
  route: string;
  /** the archive's size in bytes */
  archiveSize: number;
}

/** GET …/archive for `tinkerPath`: the route, and the URL of its archive. */
export function archiveRoute(tinkerPath: string): string {
  const p = parseTinkerPath(tinkerPath);
  if (!p) throw new TinkerError(`not a tinker://<run>/<weights|sampler_weights>/<name> path: '${tinkerPath}'`);
  return `${TINKER_API_PREFIX}/training_runs/${p.runId}/checkpoints/${p.kind}/${p.name}/archive`;
}

async function archiveUrl(core: TinkerCore, route: string): Promise<string> {
  let res;
  try {
    res = await core.withRetries(`GET ${route}`, () => core.request({ method: 'GET', path: route, redirect: 'manual', passStatuses: [301, 302, 303, 307, 308] }));
  } catch (err) {
    if (err instanceof TinkerApiError && NO_BYTES.has(err.status)) throw new CheckpointBytesUnavailableError(`GET ${route}`, err.status, `GET ${route} answered HTTP ${err.status}: the service hands out no checkpoint archive (${err.message.replace(/^.*?: /, '')})`);
    throw err;
  }
  const location = res.status >= 300 && res.status < 400 ? res.headers?.get('location') : checkpointArchiveUrlResponseSchema.safeParse(res.body).data?.url;
  if (!location) throw new CheckpointBytesUnavailableError(`GET ${route}`, res.status, `GET ${route} answered HTTP ${res.status} without a URL to the archive`);
  // a relative URL is taken relative to the service's base URL
  return new URL(location, `${core.http.baseUrl}/`).toString();
}

/** Downloads the archive of `tinkerPath` and reads its adapter (hash of adapter_model.safetensors). */
export async function fetchCheckpointAdapter(core: TinkerCore, tinkerPath: string): Promise<CheckpointAdapter> {
  const route = archiveRoute(tinkerPath);
  const url = await archiveUrl(core, route);
  let bytes: Uint8Array | null = null;
  let failure = '';
  for (let attempt = 1; attempt <= 3 && bytes === null; attempt++) {
    try {
      // no API key: the URL itself is the credential (a signed URL)
      const res = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
      if (res.ok) bytes = new Uint8Array(await res.arrayBuffer());
      else {
        failure = `HTTP ${res.status}`;
        if (res.status < 500) break;
      }
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    }
    if (bytes === null && attempt < 3) await core.http.sleep(1000 * attempt, `download of ${tinkerPath}`);
  }
  const origin = new URL(url).origin;
  if (bytes === null) throw new CheckpointBytesUnavailableError(`GET ${route}`, null, `the archive URL that GET ${route} gave (${origin}) did not answer with it (${failure})`);
  try {
    return { ...readCheckpointArchive(bytes), tinkerPath, route: `GET ${route}`, archiveSize: bytes.byteLength };
  } catch (err) {
    if (err instanceof CheckpointArchiveError) throw new CheckpointBytesUnavailableError(`GET ${route}`, null, `the archive of ${tinkerPath} from ${origin}: ${err.message}`);
    throw err;
  }
}

/** POST weights_info {tinker_path}: what the service says of a checkpoint (base model, LoRA rank). */
export function fetchWeightsInfo(core: TinkerCore, tinkerPath: string): Promise<WeightsInfo> {
  return core.withRetries('weights_info', () => core.post('weights_info', { tinker_path: tinkerPath }, weightsInfoResponseSchema));
}
