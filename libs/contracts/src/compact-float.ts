// Per-token logprobs travel as float32 values written with 9 significant digits: every float32 round-trips
// exactly through 9 digits (FLT_DECIMAL_DIG), and the JSON is ~12 characters a value instead of ~19.
// Every backend computes logprobs in float32 (Tinker returns float32, tfjs computes float32).

// compact(x) = the 9-significant-digit decimal of float32(x)
export function compactFloat32(x: number): number {
  if (!Number.isFinite(x)) throw new RangeError(`cannot carry a non-finite logprob (${x})`);
  return Number(Math.fround(x).toPrecision(9));
}

export function compactFloat32Array(values: readonly number[]): number[] {
  return values.map(compactFloat32);
}

// expand(c) = float32(c): the exact float32 the backend produced
export function expandFloat32(c: number): number {
  return Math.fround(c);
}
