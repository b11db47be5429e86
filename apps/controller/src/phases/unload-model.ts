// A model the run no longer needs is freed on the service (Tinker's unload_model; its saved checkpoints stay): a
// hosted service counts live models against the user's quota, and a run would otherwise leave one per check,
// probe and final-weights export behind. A refusal is one warning line, never a stop.
import type { TrainingClient } from '@rx/backend';

/** unload_model for a model the run no longer needs; a backend without it (embedded, test doubles) does nothing */
export async function unloadQuietly(warn: (line: string) => void, client: TrainingClient, what: string): Promise<void> {
  if (!client.unload) return;
  try {
    await client.unload();
  } catch (err) {
    warn(`unload_model of the model of ${what} (${client.modelId}) failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}; it stays until the session ends`);
  }
}
