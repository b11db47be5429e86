// The trainer's environment (validated once at start-up; a bad value: one line, exit 1): the common service
// variables and the backend it trains on.
import { BACKEND_ENV, DEFAULT_PORTS, parseServiceEnv, serviceEnvSchema } from '@rx/service-host';
import type { z } from 'zod';

export const trainerEnvSchema = serviceEnvSchema(DEFAULT_PORTS.trainer).extend(BACKEND_ENV);

export type TrainerConfig = z.infer<typeof trainerEnvSchema>;

export function loadTrainerConfig(env: NodeJS.ProcessEnv | Record<string, string | undefined>): TrainerConfig {
  return parseServiceEnv('trainer', trainerEnvSchema, env);
}
