// zstd for forward_backward bodies (`Content-Encoding: zstd`, sent by SDK 0.25 when client/config sets
// proto_compress_fwdbwd). Node 20's zlib has no zstd (it came in Node 22.15), so this uses @bokuweb/zstd-wasm,
// whose WebAssembly module is loaded once, on first use.
import { compress, decompress, init } from '@bokuweb/zstd-wasm';

export const ZSTD_ENCODING = 'zstd';
/** The level the SDK's zstandard.ZstdCompressor() uses by default. */
const LEVEL = 3;

let ready: Promise<void> | undefined;

function ensureReady(): Promise<void> {
  ready ??= init();
  return ready;
}

export async function zstdCompress(data: Uint8Array): Promise<Uint8Array> {
  await ensureReady();
  return compress(data, LEVEL);
}

/** Decompresses one zstd frame; throws when the output would exceed `maxBytes`. */
export async function zstdDecompress(data: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  await ensureReady();
  const size = frameContentSize(data);
  if (size !== undefined && size > maxBytes) throw new RangeError(`zstd frame declares ${size} bytes, more than ${maxBytes}`);
  const out = decompress(data);
  if (out.length > maxBytes) throw new RangeError(`zstd body inflates to ${out.length} bytes, more than ${maxBytes}`);
  return out;
}

/** The content size a zstd frame header declares (RFC 8878 §3.1.1.1), when it declares one. */
export function frameContentSize(data: Uint8Array): number | undefined {
  if (data.length < 6 || data[0] !== 0x28 || data[1] !== 0xb5 || data[2] !== 0x2f || data[3] !== 0xfd) return undefined;
  const descriptor = data[4]!;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const dictIdFlag = descriptor & 3;
  const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag]!;
  if (fcsBytes === 0) return undefined;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][dictIdFlag]!;
  if (data.length < at + fcsBytes) return undefined;
  let size = 0;
  for (let i = fcsBytes - 1; i >= 0; i--) size = size * 256 + data[at + i]!;
  return fcsBytes === 2 ? size + 256 : size;
}
