// The advantage service's environment (validated once at start-up; a bad value: one line, exit 1): the common
// service variables only. It never calls the backend, so it takes no backend URL or key.
import { DEFAULT_PORTS, parseServiceEnv, serviceEnvSchema } from '@rx/service-host';
import type { z } from 'zod';

export const advantageEnvSchema = serviceEnvSchema(DEFAULT_PORTS.advantage);

export type AdvantageConfig = z.infer<typeof advantageEnvSchema>;

export function loadAdvantageConfig(env: NodeJS.ProcessEnv | Record<string, string | undefined>): AdvantageConfig {
  return parseServiceEnv('advantage', advantageEnvSchema, env);
}
