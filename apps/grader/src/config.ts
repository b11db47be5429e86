// The grader's environment (validated once at start-up; a bad value: one line, exit 1): the common service
// variables and the tokenizer it decodes with. It never calls the backend, so it takes no backend URL or key.
import { DEFAULT_PORTS, parseServiceEnv, serviceEnvSchema, TOKENIZER_ENV } from '@rx/service-host';
import type { z } from 'zod';

export const graderEnvSchema = serviceEnvSchema(DEFAULT_PORTS.grader).extend(TOKENIZER_ENV);

export type GraderConfig = z.infer<typeof graderEnvSchema>;

export function loadGraderConfig(env: NodeJS.ProcessEnv | Record<string, string | undefined>): GraderConfig {
  return parseServiceEnv('grader', graderEnvSchema, env);
}
