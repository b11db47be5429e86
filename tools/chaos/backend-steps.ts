// The optimizer steps a saved training state holds, read on the backend's side (not from anything the trainer
// reports): the policy server's path index maps the tinker:// state path to the backend's own path; a
// hash-chain state path carries its step count, an embedded state's header records its AdamW step.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readTensorFile } from '@rx/embedded-model';

export function backendPathOf(statePath: string, policyDataDir: string): string | null {
  if (!statePath.startsWith('tinker://')) return statePath;
  const file = path.join(policyDataDir, 'tinker-paths.json');
  if (!existsSync(file)) return null;
  const index = JSON.parse(readFileSync(file, 'utf8')) as { paths?: Record<string, { backendPath?: string }> };
  return index.paths?.[statePath]?.backendPath ?? null;
}

export function backendOptimizerSteps(statePath: string, policyDataDir: string): number | null {
  const backendPath = backendPathOf(statePath, policyDataDir);
  if (backendPath === null) return null;
  const hashChain = /^memory:\/\/hash-chain-state\/[0-9a-f]{64}\/(\d+)$/.exec(backendPath);
  if (hashChain) return Number(hashChain[1]);
  const embedded = /^embedded:\/\/states\/(.+)$/.exec(backendPath);
  if (embedded) {
    const { header } = readTensorFile(path.join(policyDataDir, 'states', ...embedded[1].split('/')), 'state');
    const step = header.meta['step'];
    return typeof step === 'number' ? step : null;
  }
  return null;
}
