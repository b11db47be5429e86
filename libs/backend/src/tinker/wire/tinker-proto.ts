// The protobuf form of the Tinker wire (SDK 0.25): ForwardBackwardRequest (the forward_backward and forward
// body), SampleResponse and ForwardBackwardOutput (results of retrieve_future when the client sends
// `Accept: application/x-protobuf`). Messages come from tinker_public.proto through protobufjs; this file
// only maps them to and from the JSON shapes of tinker-wire.schema.ts, so the client and the server keep one
// shape whichever wire carried it. Bytes fields are little-endian arrays (tokens int32, values in the
// tensor's dtype, CSR indices and batch offsets int64).
import path from 'node:path';
import protobuf from 'protobufjs';
import type { ForwardBackwardOutput, ForwardBackwardRequest, SampleResponse, TensorData } from '../tinker-wire.schema';

export const PROTOBUF_CONTENT_TYPE = 'application/x-protobuf';

const root = protobuf.loadSync(path.join(__dirname, 'tinker_public.proto'));
const messages = {
  forwardBackwardRequest: root.lookupType('tinker_public.ForwardBackwardRequest'),
  forwardBackwardOutput: root.lookupType('tinker_public.ForwardBackwardOutput'),
  sampleResponse: root.lookupType('tinker_public.SampleResponse'),
};

/** Enum values of tinker_public.DType and StopReason. */
const DTYPE = { UNSPECIFIED: 0, FLOAT32: 1, INT64: 2, INT32: 3, BFLOAT16: 4 } as const;
const STOP_REASON = { stop: 0, length: 1 } as const;

/** A protobuf body that does not decode, or decodes to something the wire does not allow. */
export class ProtoWireError extends Error {
  override readonly name = 'ProtoWireError';
}

// ---- little-endian arrays ----

type Kind = 'int32' | 'int64' | 'float32' | 'bfloat16';
const ITEM_SIZE: Record<Kind, number> = { int32: 4, int64: 8, float32: 4, bfloat16: 2 };

function packLE(kind: Exclude<Kind, 'bfloat16'>, values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * ITEM_SIZE[kind]);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => {
    if (kind === 'int32') view.setInt32(i * 4, v, true);
    else if (kind === 'float32') view.setFloat32(i * 4, v, true);
    else view.setBigInt64(i * 8, BigInt(v), true);
  });
  return out;
}

function unpackLE(kind: Kind, bytes: Uint8Array, what: string): number[] {
  const size = ITEM_SIZE[kind];
  if (bytes.length % size !== 0) throw new ProtoWireError(`${what}: ${bytes.length} bytes is not a whole number of ${kind} values`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(bytes.length / size);
  for (let i = 0; i < out.length; i++) {
    if (kind === 'int32') out[i] = view.getInt32(i * 4, true);
    else if (kind === 'float32') out[i] = view.getFloat32(i * 4, true);
    // bfloat16 is the upper half of a float32
    else if (kind === 'bfloat16') out[i] = new DataView(new Uint32Array([view.getUint16(i * 2, true) << 16]).buffer).getFloat32(0, true);
    else {
      const v = view.getBigInt64(i * 8, true);
      if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new ProtoWireError(`${what}: int64 ${v} is out of range`);
      out[i] = Number(v);
    }
  }
  return out;
}

function dtypeKind(dtype: number, what: string): Kind {
  switch (dtype) {
    case DTYPE.FLOAT32:
      return 'float32';
    case DTYPE.INT64:
      return 'int64';
    case DTYPE.INT32:
      return 'int32';
    case DTYPE.BFLOAT16:
      return 'bfloat16';
    default:
      throw new ProtoWireError(`${what}: unsupported dtype ${dtype}`);
  }
}

/** The public dtype of a wire dtype: integers widen to int64, bfloat16 to float32 (as the SDK reads them). */
function publicDtype(kind: Kind): TensorData['dtype'] {
  return kind === 'int32' || kind === 'int64' ? 'int64' : 'float32';
}

function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : Number(v as { toString(): string });
}

// ---- ForwardBackwardRequest ----

function tensorToProto(t: TensorData): Record<string, unknown> {
  const kind = t.dtype === 'int64' ? 'int64' : 'float32';
  const msg: Record<string, unknown> = { dtype: t.dtype === 'int64' ? DTYPE.INT64 : DTYPE.FLOAT32 };
  if (t.shape !== undefined) msg.shape = t.shape;
  if (t.sparse_crow_indices !== undefined) {
    msg.sparseCsr = {
      values: packLE(kind, t.data),
      crowIndices: packLE('int64', t.sparse_crow_indices),
      colIndices: packLE('int64', t.sparse_col_indices ?? []),
    };
  } else {
    msg.dense = packLE(kind, t.data);
  }
  return msg;
}

function tensorFromProto(msg: Record<string, unknown>, what: string): TensorData {
  const kind = dtypeKind(toNumber(msg.dtype ?? 0), what);
  const shape = ((msg.shape as unknown[] | undefined) ?? []).map(toNumber);
  const sparse = msg.sparseCsr as Record<string, Uint8Array> | undefined;
  const out: TensorData = sparse
    ? {
        data: unpackLE(kind, sparse.values ?? new Uint8Array(), `${what}.values`),
        dtype: publicDtype(kind),
        sparse_crow_indices: unpackLE('int64', sparse.crowIndices ?? new Uint8Array(), `${what}.crow_indices`),
        sparse_col_indices: unpackLE('int64', sparse.colIndices ?? new Uint8Array(), `${what}.col_indices`),
      }
    : { data: unpackLE(kind, (msg.dense as Uint8Array | undefined) ?? new Uint8Array(), what), dtype: publicDtype(kind) };
  if (shape.length > 0) out.shape = shape;
  return out;
}

/** The body of forward_backward (forwardOnly false) or of a forward pass (true), as SDK 0.25 writes it. */
export function encodeForwardBackwardRequest(req: ForwardBackwardRequest, forwardOnly: boolean): Uint8Array {
  const input = req.forward_backward_input;
  const msg: Record<string, unknown> = {
    modelId: req.model_id,
    seqId: req.seq_id,
    data: input.data.map((d) => ({
      modelInput: d.model_input.chunks.map((c) => {
        if (c.type !== 'encoded_text') throw new ProtoWireError(`forward_backward: '${c.type}' chunks are not written by this client`);
        return { encodedText: { tokens: packLE('int32', c.tokens) } };
      }),
      lossFnInputs: Object.fromEntries(Object.entries(d.loss_fn_inputs).map(([k, t]) => [k, tensorToProto(t)])),
    })),
    lossFn: input.loss_fn,
  };
  if (input.loss_fn_config) msg.lossFnConfig = input.loss_fn_config;
  if (forwardOnly) msg.forwardOnly = true;
  return messages.forwardBackwardRequest.encode(messages.forwardBackwardRequest.fromObject(msg)).finish();
}

function decodeMessage(type: protobuf.Type, bytes: Uint8Array, what: string): Record<string, unknown> {
  try {
    return type.toObject(type.decode(bytes), { longs: Number, defaults: false }) as Record<string, unknown>;
  } catch (err) {
    throw new ProtoWireError(`${what}: not a ${type.name} protobuf (${err instanceof Error ? err.message : String(err)})`);
  }
}

function base64(bytes: Uint8Array | undefined): string {
  return Buffer.from(bytes ?? new Uint8Array()).toString('base64');
}

/**
 * A ForwardBackwardRequest body in its JSON shape (for the zod schema that checks either wire) and its
 * forward_only flag. Image and audio chunks come back in their JSON form (base64) for the caller to refuse.
 */
export function decodeForwardBackwardRequest(bytes: Uint8Array): { request: unknown; forwardOnly: boolean } {
  const msg = decodeMessage(messages.forwardBackwardRequest, bytes, 'forward_backward');
  const data = ((msg.data as Record<string, unknown>[] | undefined) ?? []).map((d, i) => ({
    model_input: {
      chunks: ((d.modelInput as Record<string, Record<string, unknown>>[] | undefined) ?? []).map((c, j) => {
        if (c.encodedText) return { type: 'encoded_text', tokens: unpackLE('int32', (c.encodedText.tokens as Uint8Array | undefined) ?? new Uint8Array(), `data[${i}].model_input[${j}].tokens`) };
        if (c.image) return { type: 'image', data: base64(c.image.data as Uint8Array), format: String(c.image.format ?? '') };
        if (c.dmel) return { type: 'dmel', dmel: base64(c.dmel.dmel as Uint8Array) };
        throw new ProtoWireError(`forward_backward: data[${i}].model_input[${j}] is an empty chunk`);
      }),
    },
    loss_fn_inputs: Object.fromEntries(
      Object.entries((d.lossFnInputs as Record<string, Record<string, unknown>> | undefined) ?? {}).map(([k, t]) => [k, tensorFromProto(t, `data[${i}].loss_fn_inputs.${k}`)]),
    ),
  }));
  const request: Record<string, unknown> = {
    model_id: msg.modelId ?? '',
    seq_id: toNumber(msg.seqId ?? 0),
    forward_backward_input: {
      data,
      loss_fn: msg.lossFn ?? '',
      ...(msg.lossFnConfig && Object.keys(msg.lossFnConfig).length > 0 ? { loss_fn_config: msg.lossFnConfig } : {}),
    },
  };
  return { request, forwardOnly: msg.forwardOnly === true };
}

// ---- SampleResponse ----

/** SampleResponse as the service writes it: a null prompt logprob is NaN on the wire. */
export function encodeSampleResponse(res: SampleResponse): Uint8Array {
  const msg: Record<string, unknown> = {
    sequences: res.sequences.map((s) => ({
      ...(s.stop_reason !== 'stop' ? { stopReason: STOP_REASON[s.stop_reason] } : {}),
      tokens: packLE('int32', s.tokens),
      ...(s.logprobs ? { logprobs: packLE('float32', s.logprobs) } : {}),
    })),
  };
  if (res.prompt_logprobs) msg.promptLogprobs = packLE('float32', res.prompt_logprobs.map((v) => (v === null ? Number.NaN : v)));
  if (res.prompt_cache_hit_tokens) msg.promptCacheHitTokens = res.prompt_cache_hit_tokens;
  return messages.sampleResponse.encode(messages.sampleResponse.fromObject(msg)).finish();
}

/** SampleResponse in its JSON shape, read as SDK 0.25 reads it (NaN prompt logprobs become null). */
export function decodeSampleResponse(bytes: Uint8Array): unknown {
  const msg = decodeMessage(messages.sampleResponse, bytes, 'SampleResponse');
  const sequences = ((msg.sequences as Record<string, unknown>[] | undefined) ?? []).map((s, i) => {
    const stop = toNumber(s.stopReason ?? 0);
    if (stop !== STOP_REASON.stop && stop !== STOP_REASON.length) throw new ProtoWireError(`SampleResponse: sequences[${i}] has stop_reason ${stop}`);
    const logprobs = s.logprobs as Uint8Array | undefined;
    return {
      stop_reason: stop === STOP_REASON.stop ? 'stop' : 'length',
      tokens: unpackLE('int32', (s.tokens as Uint8Array | undefined) ?? new Uint8Array(), `sequences[${i}].tokens`),
      ...(logprobs && logprobs.length > 0 ? { logprobs: unpackLE('float32', logprobs, `sequences[${i}].logprobs`) } : {}),
    };
  });
  const prompt = msg.promptLogprobs as Uint8Array | undefined;
  return {
    sequences,
    ...(prompt && prompt.length > 0 ? { prompt_logprobs: unpackLE('float32', prompt, 'prompt_logprobs').map((v) => (Number.isNaN(v) ? null : v)) } : {}),
    prompt_cache_hit_tokens: toNumber(msg.promptCacheHitTokens ?? 0),
  };
}

// ---- ForwardBackwardOutput ----

/**
 * ForwardBackwardOutput as the service writes it: one ArrayRecord holding, per output name, every datum's
 * values concatenated with int64 byte offsets (num_datums + 1) and the shape after the first dimension.
 */
export function encodeForwardBackwardOutput(out: ForwardBackwardOutput): Uint8Array {
  const names = [...new Set(out.loss_fn_outputs.flatMap((o) => Object.keys(o)))];
  const fields: Record<string, unknown> = {};
  for (const name of names) {
    const tensors = out.loss_fn_outputs.map((o, i) => {
      const t = o[name];
      if (!t) throw new ProtoWireError(`ForwardBackwardOutput: output ${i} lacks '${name}' (every datum needs the same fields)`);
      if (t.sparse_crow_indices) throw new ProtoWireError(`ForwardBackwardOutput: '${name}' of output ${i} is sparse`);
      return t;
    });
    const kind = tensors[0]!.dtype === 'int64' ? 'int64' : 'float32';
    if (tensors.some((t) => t.dtype !== tensors[0]!.dtype)) throw new ProtoWireError(`ForwardBackwardOutput: '${name}' mixes dtypes`);
    const offsets = [0];
    for (const t of tensors) offsets.push(offsets[offsets.length - 1]! + t.data.length * ITEM_SIZE[kind]);
    const trailing = tensors[0]!.shape?.slice(1) ?? [];
    fields[name] = {
      data: packLE(kind, tensors.flatMap((t) => t.data)),
      offsets: packLE('int64', offsets),
      dtype: kind === 'int64' ? DTYPE.INT64 : DTYPE.FLOAT32,
      ...(trailing.length > 0 ? { trailingShape: trailing } : {}),
    };
  }
  const msg: Record<string, unknown> = {
    lossFnOutputs: [
      {
        ...(out.loss_fn_output_type ? { typeTag: out.loss_fn_output_type } : {}),
        fields,
        ...(out.loss_fn_outputs.length > 0 ? { numDatums: out.loss_fn_outputs.length } : {}),
      },
    ],
    metrics: out.metrics,
  };
  if (out.loss_fn_output_type) msg.lossFnOutputType = out.loss_fn_output_type;
  return messages.forwardBackwardOutput.encode(messages.forwardBackwardOutput.fromObject(msg)).finish();
}

/** ForwardBackwardOutput in its JSON shape: batched tensors sliced per datum, as SDK 0.25 reads them. */
export function decodeForwardBackwardOutput(bytes: Uint8Array): unknown {
  const msg = decodeMessage(messages.forwardBackwardOutput, bytes, 'ForwardBackwardOutput');
  const metrics = Object.fromEntries(Object.entries((msg.metrics as Record<string, unknown> | undefined) ?? {}).map(([k, v]) => [k, toNumber(v)]));
  const records = (msg.lossFnOutputs as Record<string, unknown>[] | undefined) ?? [];
  const outputs: Record<string, TensorData>[] = [];
  for (const [r, record] of records.entries()) {
    const fields = Object.entries((record.fields as Record<string, Record<string, unknown>> | undefined) ?? {});
    let count = toNumber(record.numDatums ?? 0);
    const perField = fields.map(([name, bt]) => {
      const what = `loss_fn_outputs[${r}].${name}`;
      const kind = dtypeKind(toNumber(bt.dtype ?? 0), what);
      const values = unpackLE(kind, (bt.data as Uint8Array | undefined) ?? new Uint8Array(), what);
      const offsets = unpackLE('int64', (bt.offsets as Uint8Array | undefined) ?? new Uint8Array(), `${what}.offsets`);
      const trailing = ((bt.trailingShape as unknown[] | undefined) ?? []).map(toNumber);
      const perRow = trailing.reduce((a, b) => a * b, 1);
      const slices: TensorData[] = [];
      for (let i = 0; i + 1 < offsets.length; i++) {
        const [start, end] = [offsets[i]! / ITEM_SIZE[kind], offsets[i + 1]! / ITEM_SIZE[kind]];
        if (!Number.isInteger(start) || !Number.isInteger(end) || start > end || end > values.length) {
          throw new ProtoWireError(`${what}: offsets ${offsets[i]}..${offsets[i + 1]} do not slice ${values.length} values`);
        }
        const data = values.slice(start, end);
        slices.push({ data, dtype: publicDtype(kind), shape: [perRow ? data.length / perRow : 0, ...trailing] });
      }
      return { name, slices };
    });
    if (count === 0 && perField.length > 0) count = perField[0]!.slices.length;
    for (let i = 0; i < count; i++) {
      const datum: Record<string, TensorData> = {};
      for (const { name, slices } of perField) {
        const t = slices[i];
        if (!t) throw new ProtoWireError(`loss_fn_outputs[${r}].${name}: no values for datum ${i} of ${count}`);
        datum[name] = t;
      }
      outputs.push(datum);
    }
  }
  const type = typeof msg.lossFnOutputType === 'string' && msg.lossFnOutputType ? msg.lossFnOutputType.split(':').pop()! : 'ArrayRecord';
  return { loss_fn_output_type: type, loss_fn_outputs: outputs, metrics };
}
