// JSON with object keys sorted at every level: the same value always gives the same text, so its sha256 can
// identify a spec, a batch, a configuration or a file of the run directory.
import { createHash } from 'node:crypto';

// one canonical form for the whole system: the exchange record's, which its checker re-derives
export { canonicalJson } from '@rx/exchange-record';
import { canonicalJson } from '@rx/exchange-record';

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** sha256 of the canonical JSON of a value */
export function sha256Json(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
