import type { Datum } from '../policy-backend';
import { DatumShapeError, DenseSizeError, MAX_DENSE_VALUES, datumToWire, modelInputToTokens, tensorToDense, wireToDatum } from './tinker-datum';
import { formatTinkerPath, parseTinkerPath } from './tinker-path';
import { chunkDatums, importanceSamplingLoss } from './tinker-training-client';

const datum: Datum = { inputTokens: [5, 6, 7], targetTokens: [6, 7, 8], samplingLogprobs: [0, -0.5, -1.25], advantages: [0, 0.5, 0.5] };

describe('Datum on the Tinker wire', () => {
  it('maps to model_input chunks and typed loss_fn_inputs, and back', () => {
    const wire = datumToWire(datum);
    expect(wire).toEqual({
      model_input: { chunks: [{ type: 'encoded_text', tokens: [5, 6, 7] }] },
      loss_fn_inputs: {
        target_tokens: { data: [6, 7, 8], dtype: 'int64', shape: [3] },
        logprobs: { data: [0, -0.5, -1.25], dtype: 'float32', shape: [3] },
        advantages: { data: [0, 0.5, 0.5], dtype: 'float32', shape: [3] },
      },
    });
    expect(wireToDatum(JSON.parse(JSON.stringify(wire)))).toEqual(datum);
  });

  it('refuses inconsistent datums with the field named', () => {
    expect(() => datumToWire({ ...datum, advantages: [0] }, 4)).toThrow(new DatumShapeError('datum 4: advantages has 1 entries, inputTokens has 3'));
    expect(() => datumToWire({ ...datum, targetTokens: [6, 7.5, 8] })).toThrow('targetTokens[1] = 7.5 is not a token id');
    expect(() => datumToWire({ ...datum, samplingLogprobs: [0, NaN, 0] })).toThrow('samplingLogprobs[1] = NaN is not finite');
    const wire = datumToWire(datum);
    delete (wire.loss_fn_inputs as Record<string, unknown>).advantages;
    expect(() => wireToDatum(wire, 2)).toThrow('datum 2: loss_fn_inputs.advantages is missing');
    expect(() => modelInputToTokens({ chunks: [{ type: 'image', data: 'AA==', format: 'png' }] })).toThrow("chunk type 'image' is not supported");
  });

  it('concatenates several text chunks and expands CSR tensors', () => {
    expect(modelInputToTokens({ chunks: [{ type: 'encoded_text', tokens: [1] }, { type: 'encoded_text', tokens: [2, 3] }] })).toEqual([1, 2, 3]);
    // [[0, 2, 0], [1, 0, 3]]
    const csr = { data: [2, 1, 3], dtype: 'float32' as const, shape: [2, 3], sparse_crow_indices: [0, 1, 3], sparse_col_indices: [1, 0, 2] };
    expect(tensorToDense(csr, 't')).toEqual([0, 2, 0, 1, 0, 3]);
    expect(() => tensorToDense({ data: [1, 2], dtype: 'float32', shape: [3] }, 't')).toThrow('t: shape [3] does not match 2 values');
  });

  it('refuses a CSR shape past the bound before allocating, and offsets that run backwards', () => {
    const huge = { data: [1], dtype: 'float32' as const, shape: [1, 2 ** 32], sparse_crow_indices: [0, 1], sparse_col_indices: [0] };
    expect(() => tensorToDense(huge, 't')).toThrow(new DenseSizeError(`t: sparse shape [1, ${2 ** 32}] holds ${2 ** 32} values; at most ${MAX_DENSE_VALUES} are accepted`));
    const csr = { data: [2, 1, 3], dtype: 'float32' as const, shape: [2, 3], sparse_crow_indices: [0, 1, 3], sparse_col_indices: [1, 0, 2] };
    expect(tensorToDense(csr, 't', 6)).toEqual([0, 2, 0, 1, 0, 3]);
    expect(() => tensorToDense(csr, 't', 5)).toThrow('t: sparse shape [2, 3] holds 6 values; at most 5 are accepted');
    // row 0 claims entries 0 .. 1e9: refused, not looped over
    expect(() => tensorToDense({ ...csr, sparse_crow_indices: [0, 1e9, 3] }, 't')).toThrow('t: inconsistent CSR indices');
    expect(() => tensorToDense({ ...csr, sparse_crow_indices: [1, 1, 3] }, 't')).toThrow('t: inconsistent CSR indices');
    const wire = datumToWire(datum);
    wire.loss_fn_inputs.advantages = { data: [0.5], dtype: 'float32', shape: [1, 1000], sparse_crow_indices: [0, 1], sparse_col_indices: [2] };
    expect(() => wireToDatum(wire, 1, 999)).toThrow('datum 1: loss_fn_inputs.advantages: sparse shape [1, 1000] holds 1000 values; at most 999 are accepted');
  });

  it('chunks batches by count and by size, keeping order', () => {
    const wires = [0, 1, 2, 3, 4].map((i) => datumToWire({ ...datum, inputTokens: [i, i, i] }));
    expect(chunkDatums(wires, 2, 1e9).map((c) => c.length)).toEqual([2, 2, 1]);
    const size = JSON.stringify(wires[0]).length;
    expect(chunkDatums(wires, 100, size * 3).map((c) => c.length)).toEqual([3, 2]);
    expect(chunkDatums(wires, 100, 1).map((c) => c.length)).toEqual([1, 1, 1, 1, 1]);
    expect(chunkDatums(wires, 2, 1e9).flat()).toEqual(wires);
  });

  it('computes the importance-sampling loss from logprobs (fallback when the server sends no loss:sum)', () => {
    // -(exp(-0.4 - -0.5) * 0.5 + exp(-1.25 - -1.25) * 0.5)
    expect(importanceSamplingLoss([datum], [[-9, -0.4, -1.25]])).toBeCloseTo(-(Math.exp(0.1) * 0.5 + 0.5), 14);
  });
});

describe('tinker:// paths', () => {
  it('formats and parses run/kind/name, model ids with colons included', () => {
    const p = { runId: 'abc-123:train:0', kind: 'sampler_weights' as const, name: 'step-0003' };
    expect(formatTinkerPath(p)).toBe('tinker://abc-123:train:0/sampler_weights/step-0003');
    expect(parseTinkerPath(formatTinkerPath(p))).toEqual(p);
    expect(parseTinkerPath('tinker://run/weights/init')).toEqual({ runId: 'run', kind: 'weights', name: 'init' });
    for (const bad of ['embedded://x', 'tinker://run/other/x', 'tinker://run/weights', 'tinker://run/weights/a/b', 'tinker:///weights/x', 'tinker://r/weights/..']) {
      expect(parseTinkerPath(bad)).toBeUndefined();
    }
  });
});
