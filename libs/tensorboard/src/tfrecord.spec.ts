import fc from 'fast-check';
import { crc32cBitwise, maskCrc, readTfRecords } from '@rx/tensorboard/testing';
import { maskedCrc32c, tfRecord } from './tfrecord';

describe('TFRecord framing', () => {
  it('masks the CRC-32C of the check string "123456789" (0xE3069283)', () => {
    expect(crc32cBitwise(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(maskedCrc32c(Buffer.from('123456789'))).toBe(maskCrc(0xe3069283));
  });

  it('gives the masked CRC-32C of any bytes as the bitwise reference does', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      expect(maskedCrc32c(bytes)).toBe(maskCrc(crc32cBitwise(bytes)));
    }));
  });

  it('lays out a record as length (uint64 LE), its masked CRC, the data, the data\'s masked CRC', () => {
    const data = Buffer.from('event bytes');
    const r = tfRecord(data);
    expect(r.length).toBe(8 + 4 + data.length + 4);
    expect(Number(r.readBigUInt64LE(0))).toBe(data.length);
    expect(r.readUInt32LE(8)).toBe(maskCrc(crc32cBitwise(r.subarray(0, 8))));
    expect(r.subarray(12, 12 + data.length).equals(data)).toBe(true);
    expect(r.readUInt32LE(12 + data.length)).toBe(maskCrc(crc32cBitwise(data)));
    expect(readTfRecords(Buffer.concat([r, tfRecord(Buffer.alloc(0))])).map((d) => d.toString())).toEqual(['event bytes', '']);
  });

  it('is refused by the reader when a byte of the data or of the length changes (the reader can fail)', () => {
    const r = tfRecord(Buffer.from('event bytes'));
    const data = Buffer.from(r);
    data[14] ^= 1;
    expect(() => readTfRecords(data)).toThrow(/data's checksum/);
    const length = Buffer.from(r);
    length[0] ^= 2;
    expect(() => readTfRecords(length)).toThrow(/length's checksum/);
  });
});
