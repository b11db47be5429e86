// The inline size cap of a job payload. A 64 x 512-token batch stays well under it (see payload-size.spec.ts);
// anything larger is stored under a Redis key and referenced (ArtefactEnvelope).

/** Jobs larger than this (UTF-8 bytes of their JSON) travel by reference. */
export const INLINE_PAYLOAD_LIMIT_BYTES = 1_000_000;

const encoder = new TextEncoder();

// bytes = UTF-8 length of JSON.stringify(payload), what BullMQ stores for the job data
export function payloadBytes(payload: unknown): number {
  return encoder.encode(JSON.stringify(payload)).length;
}
