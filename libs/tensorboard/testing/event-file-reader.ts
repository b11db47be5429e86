// An event-file reader for the tests, written apart from the writer: its own bitwise CRC-32C (no table, no
// package), its own TFRecord walk, and the Event and Summary messages from a .proto text (field numbers as in
// tensorboard/compat/proto/event.proto and summary.proto) parsed by protobufjs, not the writer's reflection JSON.
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

const EVENT_PROTO = `
syntax = "proto3";
package tb;
message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what {
    string file_version = 3;
    bytes graph_def = 4;
    Summary summary = 5;
  }
}
message SummaryMetadata {
  message PluginData {
    string plugin_name = 1;
    bytes content = 2;
  }
  PluginData plugin_data = 1;
  string display_name = 2;
  string summary_description = 3;
}
message Summary {
  message Value {
    string node_name = 7;
    string tag = 1;
    SummaryMetadata metadata = 9;
    oneof value {
      float simple_value = 2;
      bytes obsolete_old_style_histogram = 3;
    }
  }
  repeated Value value = 1;
}
`;

const eventType = protobuf.parse(EVENT_PROTO, { keepCase: true }).root.lookupType('tb.Event');

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one bit at a time */
export function crc32cBitwise(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC: rotate right by 15, add 0xa282ead8 */
export function maskCrc(crc: number): number {
  const rotated = ((crc >>> 15) | ((crc & 0x7fff) << 17)) >>> 0;
  return (rotated + 0xa282ead8) % 2 ** 32;
}

/** the data of each record of a TFRecord file; a bad length, checksum or a torn record throws */
export function readTfRecords(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 12 > bytes.length) throw new Error(`torn record header at byte ${at}`);
    const lengthBytes = bytes.subarray(at, at + 8);
    const length = Number(lengthBytes.readBigUInt64LE(0));
    if (bytes.readUInt32LE(at + 8) !== maskCrc(crc32cBitwise(lengthBytes))) throw new Error(`record at byte ${at}: the length's checksum does not match`);
    const start = at + 12;
    if (start + length + 4 > bytes.length) throw new Error(`record at byte ${at}: ${length} bytes announced, the file ends first`);
    const data = bytes.subarray(start, start + length);
    if (bytes.readUInt32LE(start + length) !== maskCrc(crc32cBitwise(data))) throw new Error(`record at byte ${at}: the data's checksum does not match`);
    out.push(data);
    at = start + length + 4;
  }
  return out;
}

export interface ReadEvent {
  wallTime: number;
  step: number;
  fileVersion?: string;
  scalars: Array<{ tag: string; value: number }>;
}

/** every event of an event file, decoded */
export function readEventFile(file: string): ReadEvent[] {
  return readTfRecords(readFileSync(file)).map((data) => {
    const e = eventType.toObject(eventType.decode(data), { longs: Number, defaults: false }) as {
      wall_time?: number;
      step?: number;
      file_version?: string;
      summary?: { value?: Array<{ tag?: string; simple_value?: number }> };
    };
    return {
      wallTime: e.wall_time ?? 0,
      step: e.step ?? 0,
      ...(e.file_version !== undefined ? { fileVersion: e.file_version } : {}),
      scalars: (e.summary?.value ?? []).map((v) => ({ tag: v.tag ?? '', value: v.simple_value ?? NaN })),
    };
  });
}

/** tag -> [step, value][] in file order */
export function scalarsByTag(events: readonly ReadEvent[]): Map<string, Array<[number, number]>> {
  const out = new Map<string, Array<[number, number]>>();
  for (const e of events) for (const s of e.scalars) out.set(s.tag, [...(out.get(s.tag) ?? []), [e.step, s.value]]);
  return out;
}
