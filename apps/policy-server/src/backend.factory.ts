// The model the server serves: @rx/embedded-model, loaded lazily (so the server's code and its tests load without
// it). Tests serve a double through their own entry point (apps/policy-server/testing/memory.main.ts).
import type { PolicyBackend } from '@rx/backend';

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
  throw new BackendUnavailableError('@rx/embedded-model does not export EmbeddedBackend yet');
}
