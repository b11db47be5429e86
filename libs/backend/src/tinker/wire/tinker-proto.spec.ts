// The protobuf wire against golden fixtures recorded from the official Python SDK 0.25.0 (fixtures/record.py):
// request bytes written by the SDK's own encoder, result bytes built with its generated classes and read by its
// own decoder (*.sdk.json). Each codec is checked both ways against those bytes.
import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { forwardBackwardOutputSchema, forwardBackwardRequestSchema, sampleResponseSchema } from '../tinker-wire.schema';
import {
  ProtoWireError,
  decodeForwardBackwardOutput,
  decodeForwardBackwardRequest,
  decodeSampleResponse,
  encodeForwardBackwardOutput,
  encodeForwardBackwardRequest,
  encodeSampleResponse,
} from './tinker-proto';
import { frameContentSize, zstdCompress, zstdDecompress } from './zstd';

const dir = path.join(__dirname, 'fixtures');
const bytes = (name: string): Uint8Array => new Uint8Array(fs.readFileSync(path.join(dir, name)));
const json = (name: string): any => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
// the message as protobufjs itself reads it (not through our mapping), to compare encodings field by field
const schema = protobuf.loadSync(path.join(__dirname, 'tinker_public.proto'));
const asMessage = (type: string, b: Uint8Array): unknown => {
  const t = schema.lookupType(`tinker_public.${type}`);
  return t.toObject(t.decode(b), { longs: String, bytes: String });
};

describe('ForwardBackwardRequest (forward_backward and forward bodies)', () => {
  for (const name of ['forward-backward-request', 'forward-request']) {
    const input = json(`${name}.input.json`);
    const request = forwardBackwardRequestSchema.parse(input);

    it(`${name}: our bytes equal the SDK's up to the order of map entries`, () => {
      const ours = encodeForwardBackwardRequest(request, input.forward_only);
      const sdk = bytes(`${name}.bin`);
      expect(ours.length).toBe(sdk.length);
      // protobufjs writes map entries sorted by key, the SDK in insertion order; both are valid encodings
      expect(asMessage('ForwardBackwardRequest', ours)).toEqual(asMessage('ForwardBackwardRequest', sdk));
    });

    it(`${name}: the SDK's bytes decode to the request it encoded`, () => {
      const decoded = decodeForwardBackwardRequest(bytes(`${name}.bin`));
      expect(decoded.forwardOnly).toBe(input.forward_only);
      expect(forwardBackwardRequestSchema.parse(decoded.request)).toEqual(request);
    });
  }

  it('the zstd body the SDK sends under proto_compress_fwdbwd inflates to the plain body', async () => {
    const plain = bytes('forward-backward-request.bin');
    expect(hex(await zstdDecompress(bytes('forward-backward-request.bin.zst'), 1 << 20))).toBe(hex(plain));
    expect(hex(await zstdDecompress(await zstdCompress(plain), 1 << 20))).toBe(hex(plain));
  });

  it('a zstd frame that declares more than the limit is refused before it is inflated', async () => {
    const zst = bytes('forward-backward-request.bin.zst');
    expect(frameContentSize(zst)).toBe(bytes('forward-backward-request.bin').length);
    await expect(zstdDecompress(zst, 100)).rejects.toThrow(/declares 343 bytes, more than 100/);
  });

  it('refuses bytes that are not a ForwardBackwardRequest, and tokens that are not whole int32s', () => {
    expect(() => decodeForwardBackwardRequest(new Uint8Array([0x0a, 0xff]))).toThrow(ProtoWireError);
    // data[0].model_input[0].encoded_text.tokens = 3 bytes
    const bad = Uint8Array.from([0x1a, 0x09, 0x0a, 0x07, 0x0a, 0x05, 0x0a, 0x03, 1, 2, 3]);
    expect(() => decodeForwardBackwardRequest(bad)).toThrow(/3 bytes is not a whole number of int32/);
  });
});

describe('SampleResponse', () => {
  it("our server's bytes equal the fixture's", () => {
    const input = sampleResponseSchema.parse(json('sample-response.input.json'));
    expect(hex(encodeSampleResponse(input))).toBe(hex(bytes('sample-response.bin')));
  });

  it('the fixture decodes to what the SDK reads from it (NaN prompt logprob -> null)', () => {
    expect(sampleResponseSchema.parse(decodeSampleResponse(bytes('sample-response.bin')))).toEqual(
      sampleResponseSchema.parse(json('sample-response.sdk.json')),
    );
  });

  it('an unknown stop reason is refused', () => {
    // sequences[0].stop_reason = 7
    expect(() => decodeSampleResponse(Uint8Array.from([0x0a, 0x02, 0x08, 0x07]))).toThrow(/stop_reason 7/);
  });
});

describe('ForwardBackwardOutput (batched tensors)', () => {
  it("our server's bytes equal the fixture's", () => {
    const spec = json('forward-backward-output.input.json');
    const out = forwardBackwardOutputSchema.parse({
      loss_fn_output_type: spec.loss_fn_output_type,
      loss_fn_outputs: spec.loss_fn_outputs.map((o: { logprobs: number[] }) => ({ logprobs: { data: o.logprobs, dtype: 'float32', shape: [o.logprobs.length] } })),
      metrics: spec.metrics,
    });
    expect(hex(encodeForwardBackwardOutput(out))).toBe(hex(bytes('forward-backward-output.bin')));
  });

  it('the fixture decodes per datum to what the SDK reads from it', () => {
    expect(forwardBackwardOutputSchema.parse(decodeForwardBackwardOutput(bytes('forward-backward-output.bin')))).toEqual(
      forwardBackwardOutputSchema.parse(json('forward-backward-output.sdk.json')),
    );
  });

  it('round-trips int64 fields, two-dimensional outputs and several fields', () => {
    const out = {
      loss_fn_output_type: 'cross_entropy',
      loss_fn_outputs: [
        { logprobs: { data: [-1, -2, -3, -4], dtype: 'float32' as const, shape: [2, 2] }, ids: { data: [2 ** 40, 3], dtype: 'int64' as const, shape: [2] } },
        { logprobs: { data: [-0.5, -0.25], dtype: 'float32' as const, shape: [1, 2] }, ids: { data: [7], dtype: 'int64' as const, shape: [1] } },
      ],
      metrics: { 'loss:sum': 3.5, 'tokens:sum': 6 },
    };
    expect(decodeForwardBackwardOutput(encodeForwardBackwardOutput(out))).toEqual(out);
  });

  it('offsets that run past the data are refused', () => {
    const good = encodeForwardBackwardOutput({ loss_fn_output_type: 'x', loss_fn_outputs: [{ lp: { data: [1], dtype: 'float32', shape: [1] } }], metrics: {} });
    // offsets [0, 4] -> [0, 8]: find the int64 4 and make it 8
    const b = Buffer.from(good);
    const at = b.indexOf(Buffer.from([4, 0, 0, 0, 0, 0, 0, 0]));
    b[at] = 8;
    expect(() => decodeForwardBackwardOutput(b)).toThrow(/do not slice 1 values/);
  });
});
