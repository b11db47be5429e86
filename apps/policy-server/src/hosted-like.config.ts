// The policy server's hosted-like mode (off by default): it behaves as a hosted Tinker-compatible service may, so
// that rx's client and controller are tested against what a real service refuses or suffers. Configured by one JSON
// object, validated once at boot with zod:
//   RX_POLICY_HOSTED_LIKE='{"refuse_model_seed":true,"no_archive_route":true}'   (the object itself), or
//   RX_POLICY_HOSTED_LIKE=@/path/to/hosted-like.json                             (a file that holds it)
// Unset or empty: off. Refusals are fields of their own; injected faults go in `faults`, one optional setting each.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const count = z.number().int().nonnegative();

/**
 * Answers of one status instead of the real ones, from the `after_requests`-th API request on (requests counted
 * from the server's start, every /api/v1 route but healthz), for `duration_ms` (a storm) or `count` answers (a burst).
 */
export const statusBurstSchema = z
  .object({
    status: z.union([z.literal(429), z.literal(500), z.literal(502), z.literal(503), z.literal(504)]),
    after_requests: count,
    duration_ms: z.number().int().positive().optional(),
    count: z.number().int().positive().optional(),
  })
  .strict()
  .refine((b) => (b.duration_ms === undefined) !== (b.count === undefined), 'give duration_ms (a storm) or count (a burst), one of them');

/** Faults a hosted service shows (noise, 429 storms, 5xx bursts, lost sessions, 410s, slow steps): each optional, absent = none. */
export const hostedLikeFaultsSchema = z
  .object({
    /**
     * forward_backward logprobs moved by up to ±amplitude (uniform), the loss recomputed from them: a GPU service's
     * logprobs depend on the batch a request shares with other traffic, so two identical requests differ
     */
    logprob_noise: z.object({ amplitude: z.number().nonnegative().max(1), seed: z.number().int().default(0) }).strict().optional(),
    /** 429 storms and 5xx bursts */
    status_bursts: z.array(statusBurstSchema).optional(),
    /** every session is forgotten once, at this API request (the calls naming it then answer 404) */
    lose_sessions_at_request: z.number().int().positive().optional(),
    /** the first poll of every n-th sample future answers 410 (expired): the client must resubmit */
    expire_every_nth_sample_future: z.number().int().positive().optional(),
    /** forward_backward and optim_step answered only after this long (a busy GPU) */
    slow_step_ms: z.number().int().nonnegative().max(600_000).optional(),
    /** models left out of get_server_capabilities (and refused at create_model): a service that does not serve them */
    unserved_models: z.array(z.string().min(1)).optional(),
  })
  .strict();

export const hostedLikeSchema = z
  .object({
    /** create_model refuses a per-model seed (`lora_config.seed`) with a 400, as the service of the published run did */
    refuse_model_seed: z.boolean().default(false),
    /** no checkpoint archive route: GET /api/v1/training_runs/{id}/checkpoints/{kind}/{name}/archive answers 404 */
    no_archive_route: z.boolean().default(false),
    faults: hostedLikeFaultsSchema.default({}),
  })
  .strict();

export type HostedLikeConfig = z.output<typeof hostedLikeSchema>;
export type HostedLikeFaults = z.output<typeof hostedLikeFaultsSchema>;

/** The object of RX_POLICY_HOSTED_LIKE (inline JSON, or `@<file>`), parsed; null when unset (the mode is off). */
export function parseHostedLike(value: string | undefined): HostedLikeConfig | null {
  if (value === undefined || value.trim() === '') return null;
  const text = value.trim();
  let source = 'its JSON';
  let json: string = text;
  if (text.startsWith('@')) {
    source = text.slice(1);
    try {
      json = readFileSync(source, 'utf8');
    } catch (err) {
      throw new Error(`cannot read ${source} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new Error(`${source} is not JSON (${(err as Error).message})`);
  }
  const parsed = hostedLikeSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `${i.path.join('.') || '(object)'}: ${i.message}`).join('; '));
  }
  return parsed.data;
}
