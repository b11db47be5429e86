// The sha256 of the LoRA adapter in a saved checkpoint, as the exchange means it: the bytes of the adapter file in
// the checkpoint's archive, fetched over the wire through the SDK's route (GET …/checkpoints/{kind}/{name}/archive,
// then the URL it gives; libs/backend tinker-checkpoints.ts): sha256 of adapter_model.safetensors as it is in the
// archive (docs/tinker.md). One path for every Tinker-compatible service: the policy server rx run spawns, one
// started apart (compose, Kubernetes), Tinker itself.
//   - When the service gives no bytes (the route answers 404 or is missing), there is no hash: the result says why,
//     in one line, with what the service's weights_info says of the checkpoint (the evidence that stands in).
//   - The pipeline's hash-chain test policy (no server): its state path carries the weights digest and step.
import { CheckpointBytesUnavailableError, parseTinkerPath, TinkerBackend, type PolicyBackend } from '@rx/backend';
import type { AdapterHash } from '@rx/run-dir';

const HASH_CHAIN_STATE = /^memory:\/\/hash-chain-state\/([0-9a-f]{64})\/(\d+)$/;

/** weights_info of a training state (sampler weights have none), or null when the service does not answer it */
async function weightsInfo(backend: TinkerBackend, path: string): Promise<Record<string, unknown> | null> {
  if (parseTinkerPath(path)?.kind !== 'weights') return null;
  return backend.weightsInfo(path).catch(() => null);
}

export async function adapterHash(backend: PolicyBackend, path: string): Promise<AdapterHash> {
  const chain = HASH_CHAIN_STATE.exec(path);
  if (chain) return { sha256: chain[1], source: 'hash-chain test policy: the weights digest its state path carries', optimizer_step: Number(chain[2]) };
  if (!(backend instanceof TinkerBackend)) {
    return { sha256: null, source: `the ${backend.kind} backend in this process has no checkpoint archive`, optimizer_step: null, unavailable: 'no checkpoint archive route in this backend', weights_info: null };
  }
  try {
    const a = await backend.checkpointAdapter(path);
    return {
      sha256: a.sha256,
      source: `sha256 of ${a.file} (${a.size} bytes) in the checkpoint archive of ${a.route} (${a.files.join(', ')})`,
      optimizer_step: a.optimizerStep,
      unavailable: null,
      weights_info: await weightsInfo(backend, path),
    };
  } catch (err) {
    if (!(err instanceof CheckpointBytesUnavailableError)) throw err;
    return { sha256: null, source: 'server_response', optimizer_step: null, unavailable: err.message, weights_info: await weightsInfo(backend, path) };
  }
}
