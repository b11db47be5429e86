// The sha256 of the LoRA adapter held in a saved training state, read where the backend keeps its bytes:
//   - the embedded model behind the policy server rx run spawns: <run>/services/policy-server, whose
//     tinker-paths.json maps the tinker:// path to embedded://states/<name>; the adapter is the param/ tensors,
//     the first part of states/<name>/state.bin (float64), and the header's meta.step is the optimizer's step;
//   - the pipeline's hash-chain test policy: its state path carries the weights digest and step;
//   - Tinker: the service hands out no adapter bytes, so there is no hash (null, and the record says why).
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { sha256Hex } from '../run/canonical-json';
import type { AdapterHash, RunDir } from '@rx/run-dir';

const HASH_CHAIN_STATE = /^memory:\/\/hash-chain-state\/([0-9a-f]{64})\/(\d+)$/;
const EMBEDDED_STATE = /^embedded:\/\/states\/(.+)$/;

interface TensorHeader {
  dtype: 'float32' | 'float64';
  tensors: Array<{ name: string; shape: number[] }>;
  meta: Record<string, unknown>;
}

function embeddedStateHash(dataDir: string, name: string): AdapterHash | null {
  const stateDir = path.join(dataDir, 'states', ...name.split('/'));
  const headerFile = path.join(stateDir, 'state.json');
  const binFile = path.join(stateDir, 'state.bin');
  if (!existsSync(headerFile) || !existsSync(binFile)) return null;
  const header = JSON.parse(readFileSync(headerFile, 'utf8')) as TensorHeader;
  const width = header.dtype === 'float64' ? 8 : 4;
  // the adapter = the param/ tensors, written first: sum of their element counts x bytes per element
  const params = header.tensors.filter((t) => t.name.startsWith('param/'));
  const bytes = params.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0) * width;
  const step = header.meta['step'];
  return {
    sha256: sha256Hex(readFileSync(binFile).subarray(0, bytes)),
    source: `embedded state file: the ${params.length} param/ tensors of ${path.relative(path.dirname(dataDir), binFile)}`,
    optimizer_step: typeof step === 'number' ? step : null,
  };
}

export function adapterHash(dir: RunDir, statePath: string): AdapterHash {
  const chain = HASH_CHAIN_STATE.exec(statePath);
  if (chain) return { sha256: chain[1], source: 'hash-chain test policy: the weights digest its state path carries', optimizer_step: Number(chain[2]) };
  const dataDir = path.join(dir.servicesDataDir, 'policy-server');
  const index = path.join(dataDir, 'tinker-paths.json');
  if (statePath.startsWith('tinker://') && existsSync(index)) {
    const entry = (JSON.parse(readFileSync(index, 'utf8')) as { paths?: Record<string, { backendPath?: string }> }).paths?.[statePath];
    const embedded = entry?.backendPath ? EMBEDDED_STATE.exec(entry.backendPath) : null;
    const hash = embedded ? embeddedStateHash(dataDir, embedded[1]) : null;
    if (hash) return hash;
  }
  return { sha256: null, source: 'the backend hands out no adapter bytes for this path (Tinker); only its server response is evidence', optimizer_step: null };
}
