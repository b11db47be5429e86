// A checkpoint's archive, as the Tinker service hands it out (GET …/checkpoints/{kind}/{name}/archive -> a URL to
// a tar, read by the SDK's `tinker checkpoint download` with Python's tarfile, so possibly gzipped): a PEFT adapter,
// `adapter_model.safetensors` (or `adapter_model.bin`) with `adapter_config.json`, and `checkpoint_complete`.
// The adapter's hash, as rx records it: the sha256 of the bytes of `adapter_model.safetensors` as they are in the
// archive (`adapter_model.bin` when there is no safetensors file), nothing else (docs/tinker.md).
// rx's policy server writes the same layout, plus `optimizer_state.json` (`{"step": n}`) for a training state.
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { createTar, parseTar } from 'nanotar';
import type { AdapterWeights } from '../policy-backend';
import { encodeSafetensors } from './wire/safetensors';

export const ADAPTER_FILE = 'adapter_model.safetensors';
export const ADAPTER_BIN_FILE = 'adapter_model.bin';
export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const CHECKPOINT_COMPLETE_FILE = 'checkpoint_complete';
/** rx's policy server only: the optimizer's step counter of a training state */
export const OPTIMIZER_STATE_FILE = 'optimizer_state.json';

export class CheckpointArchiveError extends Error {
  override readonly name = 'CheckpointArchiveError';
}

/** The tar the policy server serves for a checkpoint of its backend. */
export function writeCheckpointArchive(w: AdapterWeights): Uint8Array {
  const attrs = { mtime: 0, mode: '644' };
  const config = { peft_type: 'LORA', base_model_name_or_path: w.baseModel, r: w.rank, lora_alpha: w.alpha, target_modules: [...new Set(w.tensors.map((t) => t.name.split('.').slice(0, -1).join('.')))].sort() };
  const files = [
    { name: ADAPTER_FILE, data: encodeSafetensors(w.tensors, { format: 'pt' }), attrs },
    { name: ADAPTER_CONFIG_FILE, data: new TextEncoder().encode(`${JSON.stringify(config, null, 1)}\n`), attrs },
    ...(w.optimizerStep === null ? [] : [{ name: OPTIMIZER_STATE_FILE, data: new TextEncoder().encode(`${JSON.stringify({ step: w.optimizerStep })}\n`), attrs }]),
    { name: CHECKPOINT_COMPLETE_FILE, data: new Uint8Array(0), attrs },
  ];
  return createTar(files);
}

/** What rx reads from a checkpoint archive. */
export interface ArchiveAdapter {
  /** the file hashed: adapter_model.safetensors, else adapter_model.bin */
  file: string;
  /** sha256 of that file's bytes, as they are in the archive */
  sha256: string;
  size: number;
  /** every file in the archive, sorted */
  files: string[];
  /** checkpoint_complete is there */
  complete: boolean;
  /** the step in optimizer_state.json (rx's policy server), else null */
  optimizerStep: number | null;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** The adapter in a checkpoint archive (tar, or gzipped tar); throws CheckpointArchiveError when it holds none. */
export function readCheckpointArchive(bytes: Uint8Array): ArchiveAdapter {
  let tar = bytes;
  if (bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1]) {
    try {
      tar = gunzipSync(bytes);
    } catch (err) {
      throw new CheckpointArchiveError(`the archive is gzip but does not inflate (${(err as Error).message})`);
    }
  }
  let entries: ReturnType<typeof parseTar>;
  try {
    entries = parseTar(tar);
  } catch (err) {
    throw new CheckpointArchiveError(`the archive is not a tar (${(err as Error).message})`);
  }
  // members by their base name (a leading ./ or a directory level, as tools write them); two of one name: ambiguous
  const files = new Map<string, Uint8Array>();
  for (const e of entries) {
    if (e.type !== undefined && e.type !== 'file' && e.type !== 'contiguousFile') continue;
    const base = e.name.split('/').pop() as string;
    if (files.has(base)) throw new CheckpointArchiveError(`the archive holds two files named ${base}`);
    files.set(base, ('data' in e ? e.data : undefined) ?? new Uint8Array(0));
  }
  const names = [...files.keys()].sort();
  const file = files.has(ADAPTER_FILE) ? ADAPTER_FILE : files.has(ADAPTER_BIN_FILE) ? ADAPTER_BIN_FILE : null;
  if (file === null) throw new CheckpointArchiveError(`the archive holds no ${ADAPTER_FILE} (nor ${ADAPTER_BIN_FILE}); it holds: ${names.join(', ') || 'nothing'}`);
  const data = files.get(file) as Uint8Array;
  let optimizerStep: number | null = null;
  const optimizer = files.get(OPTIMIZER_STATE_FILE);
  if (optimizer) {
    try {
      const step = (JSON.parse(new TextDecoder().decode(optimizer)) as { step?: unknown }).step;
      optimizerStep = Number.isInteger(step) ? (step as number) : null;
    } catch {
      optimizerStep = null;
    }
  }
  return { file, sha256: createHash('sha256').update(data).digest('hex'), size: data.byteLength, files: names, complete: files.has(CHECKPOINT_COMPLETE_FILE), optimizerStep };
}
