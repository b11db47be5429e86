// logs/endpoints.json: where each running service answers (health, metrics), rewritten each time the stack starts.
import { z } from 'zod';
import { isoTime, jsonObject } from './json-object';

export const endpointsSchema = jsonObject({
  written_at: isoTime,
  /** service name (controller, sampler, ...) -> its base URL */
  endpoints: z.record(z.string(), z.string()),
});
export type Endpoints = z.infer<typeof endpointsSchema>;
