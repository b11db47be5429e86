// TFRecord framing, as TensorFlow's record writer lays out every record of an event file:
//   uint64 length (little-endian) | uint32 masked_crc32c(length bytes) | data | uint32 masked_crc32c(data)
// masked_crc32c(x) = ((c >>> 15) | (c << 17)) + 0xa282ead8 (mod 2^32), c = CRC-32C (Castagnoli) of x.
import CRC32C from 'crc-32/crc32c';

const MASK_DELTA = 0xa282ead8;

/** the CRC-32C of the bytes, masked as TFRecord stores it */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = CRC32C.buf(bytes) >>> 0;
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}

/** one record: the data framed with its length and both checksums */
export function tfRecord(data: Uint8Array): Buffer {
  const out = Buffer.alloc(8 + 4 + data.length + 4);
  out.writeBigUInt64LE(BigInt(data.length), 0);
  out.writeUInt32LE(maskedCrc32c(out.subarray(0, 8)), 8);
  out.set(data, 12);
  out.writeUInt32LE(maskedCrc32c(data), 12 + data.length);
  return out;
}
