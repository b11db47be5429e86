// The sampler's environment (validated once at start-up; a bad value: one line, exit 1): the common service
// variables, the backend it samples from, the tokenizer it renders with and its fan-out.
import { BACKEND_ENV, DEFAULT_PORTS, parseServiceEnv, SAMPLER_CONCURRENCY_ENV, serviceEnvSchema, TOKENIZER_ENV } from '@rx/service-host';
import type { z } from 'zod';

export const samplerEnvSchema = serviceEnvSchema(DEFAULT_PORTS.sampler).extend({ ...BACKEND_ENV, ...TOKENIZER_ENV, ...SAMPLER_CONCURRENCY_ENV });

export type SamplerConfig = z.infer<typeof samplerEnvSchema>;

export function loadSamplerConfig(env: NodeJS.ProcessEnv | Record<string, string | undefined>): SamplerConfig {
  return parseServiceEnv('sampler', samplerEnvSchema, env);
}
