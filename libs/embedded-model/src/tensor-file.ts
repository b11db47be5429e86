// Named tensors on disk: `<stem>.json` (format, dtype, names and shapes, sha256 of the data, metadata) beside
// `<stem>.bin` (little-endian float32 or float64 values, tensors back to back in manifest order).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ParamSet } from './param-set';

export const TENSOR_FILE_FORMAT = 'rx-tensors/1';

export type TensorDtype = 'float32' | 'float64';

export interface TensorFileHeader {
  format: typeof TENSOR_FILE_FORMAT;
  dtype: TensorDtype;
  tensors: { name: string; shape: number[] }[];
  sha256: string;
  meta: Record<string, unknown>;
}

export interface TensorFile {
  params: ParamSet;
  header: TensorFileHeader;
}

/** Writes `<dir>/<stem>.bin` then `.json` (each through a temporary file and a rename); returns the data's sha256. */
export function writeTensorFile(dir: string, stem: string, params: ParamSet, dtype: TensorDtype, meta: Record<string, unknown>): string {
  fs.mkdirSync(dir, { recursive: true });
  const count = params.reduce((n, p) => n + p.data.length, 0);
  const values = dtype === 'float32' ? new Float32Array(count) : new Float64Array(count);
  let offset = 0;
  for (const p of params) {
    values.set(p.data, offset);
    offset += p.data.length;
  }
  const bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const header: TensorFileHeader = { format: TENSOR_FILE_FORMAT, dtype, tensors: params.map((p) => ({ name: p.name, shape: p.shape })), sha256, meta };
  atomicWrite(path.join(dir, `${stem}.bin`), bytes);
  atomicWrite(path.join(dir, `${stem}.json`), Buffer.from(JSON.stringify(header, null, 1) + '\n'));
  return sha256;
}

export function readTensorFile(dir: string, stem: string): TensorFile {
  const headerPath = path.join(dir, `${stem}.json`);
  const binPath = path.join(dir, `${stem}.bin`);
  if (!fs.existsSync(headerPath) || !fs.existsSync(binPath)) throw new Error(`no saved tensors at ${path.join(dir, stem)} (.json/.bin)`);
  let header: TensorFileHeader;
  try {
    header = JSON.parse(fs.readFileSync(headerPath, 'utf8')) as TensorFileHeader;
  } catch (e) {
    throw new Error(`${headerPath} is not valid JSON: ${(e as Error).message}`);
  }
  if (header.format !== TENSOR_FILE_FORMAT || (header.dtype !== 'float32' && header.dtype !== 'float64') || !Array.isArray(header.tensors)) {
    throw new Error(`${headerPath} is not an ${TENSOR_FILE_FORMAT} header`);
  }
  const bytes = fs.readFileSync(binPath);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== header.sha256) throw new Error(`${binPath} does not match its header (sha256 ${sha256}, expected ${header.sha256})`);
  const width = header.dtype === 'float32' ? 4 : 8;
  const count = header.tensors.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
  if (bytes.byteLength !== count * width) throw new Error(`${binPath} holds ${bytes.byteLength} bytes, expected ${count * width}`);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const values = header.dtype === 'float32' ? new Float32Array(copy.buffer) : new Float64Array(copy.buffer);
  let offset = 0;
  const params: ParamSet = header.tensors.map((t) => {
    const n = t.shape.reduce((a, b) => a * b, 1);
    const data = Float64Array.from(values.subarray(offset, offset + n));
    offset += n;
    return { name: t.name, shape: [...t.shape], data };
  });
  return { params, header };
}

function atomicWrite(file: string, data: Buffer): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}
