// The safetensors file format (huggingface/safetensors), as PEFT writes adapter_model.safetensors: an 8-byte
// little-endian header length N, N bytes of JSON (`{name: {dtype, shape, data_offsets: [begin, end]}, __metadata__}`,
// padded with spaces to a multiple of 8), then the tensors' little-endian bytes back to back. Written here with the
// tensors in name order, so the same tensors always give the same bytes.
import type { AdapterTensor } from '../../policy-backend';

const WIDTH = { F32: 4, F64: 8 } as const;

export class SafetensorsError extends Error {
  override readonly name = 'SafetensorsError';
}

/** The file's bytes for `tensors` (in name order) and `metadata` (string values only, as the format requires). */
export function encodeSafetensors(tensors: readonly AdapterTensor[], metadata: Record<string, string> = {}): Uint8Array {
  const sorted = [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header['__metadata__'] = metadata;
  let offset = 0;
  for (const t of sorted) {
    if (t.name === '__metadata__' || t.name in header) throw new SafetensorsError(`tensor name '${t.name}' is reserved or repeated`);
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) throw new SafetensorsError(`tensor '${t.name}' has ${t.data.length} values, its shape [${t.shape.join(', ')}] holds ${count}`);
    const bytes = count * WIDTH[t.dtype];
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  const jsonBytes = Buffer.byteLength(json, 'utf8');
  json += ' '.repeat((8 - (jsonBytes % 8)) % 8);
  const head = Buffer.from(json, 'utf8');
  const out = new Uint8Array(8 + head.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const t of sorted) {
    for (let i = 0; i < t.data.length; i++, at += WIDTH[t.dtype]) {
      if (t.dtype === 'F32') view.setFloat32(at, t.data[i]!, true);
      else view.setFloat64(at, t.data[i]!, true);
    }
  }
  return out;
}

export interface SafetensorsEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

