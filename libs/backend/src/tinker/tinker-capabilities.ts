// What a run needs of a Tinker service, read from its get_server_capabilities answer before anything is written:
// the spec's base model among the served ones and, where the service announces a largest LoRA rank for it, the
// spec's rank within it. A problem is one line naming the model and what the service serves.
import type { ServerCapabilities } from './tinker-wire.schema';

export interface RequestedModel {
  baseModel: string;
  rank: number;
}

/** the served model names, in the service's order (entries without a name left out) */
export function servedModels(caps: ServerCapabilities): string[] {
  return caps.supported_models.map((m) => m.model_name).filter((n): n is string => typeof n === 'string' && n.length > 0);
}

/** null when the service serves `want.baseModel` at `want.rank`; else why not, in one line. */
export function capabilityProblem(caps: ServerCapabilities, want: RequestedModel, service: string): string | null {
  const served = servedModels(caps);
  const entry = caps.supported_models.find((m) => m.model_name === want.baseModel);
  if (!entry) {
    const list = served.length > 0 ? served.join(', ') : 'none';
    return `base model '${want.baseModel}' is not served by ${service}; it serves: ${list}`;
  }
  if (typeof entry.max_lora_rank === 'number' && want.rank > entry.max_lora_rank) {
    return `lora_rank ${want.rank} is above the largest rank ${service} allows for '${want.baseModel}' (${entry.max_lora_rank})`;
  }
  return null;
}
