// The grader's environment (validated once at start-up; a bad value: one line, exit 1).
import { DEFAULT_PORTS, parseServiceEnv, serviceEnvSchema } from '@rx/service-host';
import { z } from 'zod';

export const graderEnvSchema = serviceEnvSchema(DEFAULT_PORTS.grader).extend({
  /** a tokenizer.json (or a folder with one) for Qwen renderers; without it the tokenizer comes from the hub */
  RX_TOKENIZER_PATH: z.string().min(1).optional(),
});

export type GraderConfig = z.infer<typeof graderEnvSchema>;

export function loadGraderConfig(env: NodeJS.ProcessEnv | Record<string, string | undefined>): GraderConfig {
  return parseServiceEnv('grader', graderEnvSchema, env);
}
