// TINKER_BASE_URL / TINKER_API_KEY from the environment, validated with zod. A bad or missing value gives one
// line naming the variable; the key's value never appears in a message.
import { z } from 'zod';
import { TinkerConfigError } from './tinker-errors';

export const DEFAULT_TINKER_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod';

const emptyToUndefined = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);

export const tinkerEnvSchema = z.object({
  TINKER_BASE_URL: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .trim()
      .url('must be an http(s) URL such as https://tinker.thinkingmachines.dev/services/tinker-prod')
      .refine((u) => /^https?:\/\//.test(u), 'must be an http(s) URL')
      .default(DEFAULT_TINKER_BASE_URL),
  ),
  TINKER_API_KEY: z.preprocess(
    emptyToUndefined,
    z.string({
      required_error: 'is not set: export TINKER_API_KEY=<your Tinker API key>',
      invalid_type_error: 'must be a string',
    }),
  ),
});
export type TinkerEnv = z.infer<typeof tinkerEnvSchema>;

/** Parses the Tinker environment or throws one TinkerConfigError line listing every bad variable. */
export function parseTinkerEnv(env: Record<string, string | undefined>): TinkerEnv {
  const parsed = tinkerEnvSchema.safeParse({ TINKER_BASE_URL: env.TINKER_BASE_URL, TINKER_API_KEY: env.TINKER_API_KEY });
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`);
  throw new TinkerConfigError(`Tinker configuration: ${issues.join('; ')}`);
}
