// The sampler's environment (validated once at start-up; a bad value: one line, exit 1).
import { DEFAULT_PORTS, parseServiceEnv, serviceEnvSchema } from '@rx/service-host';
import { z } from 'zod';

export const samplerEnvSchema = serviceEnvSchema(DEFAULT_PORTS.sampler).extend({
  /** a tokenizer.json (or a folder with one) for Qwen renderers; without it the tokenizer comes from the hub */
  RX_TOKENIZER_PATH: z.string().min(1).optional(),
});

export type SamplerConfig = z.infer<typeof samplerEnvSchema>;

export function loadSamplerConfig(env: NodeJS.ProcessEnv | Record<string, string | undefined>): SamplerConfig {
  return parseServiceEnv('sampler', samplerEnvSchema, env);
}
