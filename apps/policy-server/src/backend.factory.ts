// Builds the PolicyBackend the server serves. `embedded` loads @rx/embedded-model lazily (so the server and
// its tests run without it); `memory` is the in-memory test bigram (protocol and overhead benchmarks).
import { InMemoryPolicyBackend, type PolicyBackend } from '@rx/backend';
import type { PolicyServerConfig } from './config';

export class BackendUnavailableError extends Error {
  override readonly name = 'BackendUnavailableError';
}

/** What the factory expects from @rx/embedded-model: `createEmbeddedBackend(opts)` or `new EmbeddedBackend(opts)`. */
export interface EmbeddedBackendOptions {
  dataDir: string;
}

type EmbeddedModule = {
  createEmbeddedBackend?: (options: EmbeddedBackendOptions) => PolicyBackend | Promise<PolicyBackend>;
  EmbeddedBackend?: new (options: EmbeddedBackendOptions) => PolicyBackend;
};

export async function loadEmbeddedBackend(dataDir: string): Promise<PolicyBackend> {
  const mod = (await import('@rx/embedded-model')) as EmbeddedModule;
  if (typeof mod.createEmbeddedBackend === 'function') return mod.createEmbeddedBackend({ dataDir });
  if (typeof mod.EmbeddedBackend === 'function') return new mod.EmbeddedBackend({ dataDir });
  throw new BackendUnavailableError('@rx/embedded-model does not export EmbeddedBackend yet; set RX_POLICY_BACKEND=memory for the in-memory test model');
}

export async function createBackend(config: PolicyServerConfig): Promise<PolicyBackend> {
  if (config.backend === 'memory') return new InMemoryPolicyBackend();
  return loadEmbeddedBackend(config.dataDir);
}
