// Maps the backend's Datum (one importance-sampling example, position-aligned) to Tinker's wire Datum
// (`model_input` chunks + `loss_fn_inputs` TensorData) and back. Position i of model_input predicts
// target_tokens[i]; `logprobs` are the sampling policy's, `advantages` are 0 on prompt positions.
import type { Datum } from '../policy-backend';
import type { ModelInput, TensorData, WireDatum } from './tinker-wire.schema';

export class DatumShapeError extends Error {
  override readonly name = 'DatumShapeError';
}

/** A sparse tensor whose shape would expand past the caller's bound on values. */
export class DenseSizeError extends DatumShapeError {}

/** Checks that the four arrays of a datum have one length and that tokens are non-negative integers. */
export function assertDatumShape(datum: Datum, index: number): void {
  const n = datum.inputTokens.length;
  if (n === 0) throw new DatumShapeError(`datum ${index}: inputTokens is empty`);
  for (const key of ['targetTokens', 'samplingLogprobs', 'advantages'] as const) {
    if (datum[key].length !== n) {
      throw new DatumShapeError(`datum ${index}: ${key} has ${datum[key].length} entries, inputTokens has ${n}`);
    }
  }
  for (const key of ['inputTokens', 'targetTokens'] as const) {
    const bad = datum[key].findIndex((t) => !Number.isInteger(t) || t < 0);
    if (bad >= 0) throw new DatumShapeError(`datum ${index}: ${key}[${bad}] = ${datum[key][bad]} is not a token id`);
  }
  for (const key of ['samplingLogprobs', 'advantages'] as const) {
    const bad = datum[key].findIndex((x) => !Number.isFinite(x));
    if (bad >= 0) throw new DatumShapeError(`datum ${index}: ${key}[${bad}] = ${datum[key][bad]} is not finite`);
  }
}

export function tokensToModelInput(tokens: number[]): ModelInput {
  return { chunks: [{ type: 'encoded_text', tokens: [...tokens] }] };
}

function tensor(data: number[], dtype: TensorData['dtype']): TensorData {
  return { data: [...data], dtype, shape: [data.length] };
}

export function datumToWire(datum: Datum, index = 0): WireDatum {
  assertDatumShape(datum, index);
  return {
    model_input: tokensToModelInput(datum.inputTokens),
    loss_fn_inputs: {
      target_tokens: tensor(datum.targetTokens, 'int64'),
      logprobs: tensor(datum.samplingLogprobs, 'float32'),
      advantages: tensor(datum.advantages, 'float32'),
    },
  };
}

/** Concatenates the encoded_text chunks of a model input; other chunk kinds (images, audio) are refused. */
export function modelInputToTokens(input: ModelInput): number[] {
  const tokens: number[] = [];
  for (const chunk of input.chunks) {
    if (chunk.type !== 'encoded_text') throw new DatumShapeError(`model_input chunk type '${chunk.type}' is not supported (text only)`);
    for (const t of chunk.tokens) tokens.push(t);
  }
  return tokens;
}

/** Most values a sparse tensor may expand to when the caller names no bound (a CSR `shape` is the sender's word). */
export const MAX_DENSE_VALUES = 1 << 24;

/**
 * Dense values of a TensorData, expanding CSR (`sparse_crow_indices`/`sparse_col_indices`, 2-D) when present.
 * A sparse tensor whose shape holds more than `maxValues` values is refused before anything is allocated.
 */
export function tensorToDense(t: TensorData, what: string, maxValues = MAX_DENSE_VALUES): number[] {
  if (t.sparse_crow_indices === undefined && t.sparse_col_indices === undefined) {
    const expected = t.shape?.reduce((a, b) => a * b, 1);
    if (expected !== undefined && expected !== t.data.length) {
      throw new DatumShapeError(`${what}: shape [${t.shape?.join(', ')}] does not match ${t.data.length} values`);
    }
    return t.data;
  }
  const crow = t.sparse_crow_indices;
  const col = t.sparse_col_indices;
  if (!crow || !col || !t.shape || t.shape.length !== 2) {
    throw new DatumShapeError(`${what}: a sparse tensor needs sparse_crow_indices, sparse_col_indices and a 2-D shape`);
  }
  const [rows, cols] = t.shape as [number, number];
  if (rows * cols > maxValues) {
    throw new DenseSizeError(`${what}: sparse shape [${rows}, ${cols}] holds ${rows * cols} values; at most ${maxValues} are accepted`);
  }
  // row r holds entries crow[r] .. crow[r + 1] - 1: the offsets start at 0 and never decrease
  if (crow.length !== rows + 1 || col.length !== t.data.length || crow[0] !== 0 || crow[rows] !== t.data.length || crow.some((k, r) => r > 0 && k < crow[r - 1]!)) {
    throw new DatumShapeError(`${what}: inconsistent CSR indices`);
  }
  const dense = new Array<number>(rows * cols).fill(0);
  for (let r = 0; r < rows; r++) {
    for (let k = crow[r]!; k < crow[r + 1]!; k++) {
      const c = col[k]!;
      if (c >= cols) throw new DatumShapeError(`${what}: column index ${c} out of range`);
      dense[r * cols + c] = t.data[k]!;
    }
  }
  return dense;
}

/**
 * Inverse of datumToWire for loss_fn='importance_sampling' (needs target_tokens, logprobs, advantages).
 * `maxValues` bounds what one sparse tensor may expand to (a server passes its tokens-per-request limit).
 */
export function wireToDatum(wire: WireDatum, index = 0, maxValues = MAX_DENSE_VALUES): Datum {
  const inputTokens = modelInputToTokens(wire.model_input);
  const field = (name: string): number[] => {
    const t = wire.loss_fn_inputs[name];
    if (!t) throw new DatumShapeError(`datum ${index}: loss_fn_inputs.${name} is missing (importance_sampling needs target_tokens, logprobs, advantages)`);
    return tensorToDense(t, `datum ${index}: loss_fn_inputs.${name}`, maxValues);
  };
  const datum: Datum = {
    inputTokens,
    targetTokens: field('target_tokens'),
    samplingLogprobs: field('logprobs'),
    advantages: field('advantages'),
  };
  assertDatumShape(datum, index);
  return datum;
}
