// A payload too large to travel inline is stored under a Redis key; the job carries this reference instead.
import { z } from 'zod';

export const artefactRefSchema = z.object({
  /** the Redis key holding the payload's JSON */
  key: z.string().min(1).max(512),
  /** hex sha256 of that JSON: the consumer refuses content that does not match */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().positive(),
});

/** What a job carries in place of a large payload: the reference plus the step header for humans and dashboards. */
export const artefactEnvelopeSchema = z.object({
  $artefact: artefactRefSchema,
  runId: z.string().max(64).optional(),
  arm: z.string().max(32).optional(),
  step: z.number().int().optional(),
});

export type ArtefactRef = z.infer<typeof artefactRefSchema>;
export type ArtefactEnvelope = z.infer<typeof artefactEnvelopeSchema>;

export function isArtefactEnvelope(data: unknown): data is ArtefactEnvelope {
  return typeof data === 'object' && data !== null && '$artefact' in data;
}
