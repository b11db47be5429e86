// The spec's "seed-0 shuffled order" of the train split, reproducing Hugging Face `Dataset.shuffle(seed=seed)`:
// `np.random.default_rng(seed).permutation(len(ds))` then `ds.select(indices=permutation)`. That is numpy's
// SeedSequence -> PCG64 (XSL-RR 128/64) -> Generator.shuffle (Fisher-Yates from the end, `random_interval`
// draws on buffered 32-bit halves). Re-implemented from numpy's documented algorithms; checked against numpy
// output in seeded-shuffle.fixture.ts.

const MASK32 = 0xffffffff;
const MASK64 = (1n << 64n) - 1n;
const MASK128 = (1n << 128n) - 1n;

// numpy SeedSequence constants (bit_generator.pyx)
const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const XSHIFT = 16;
const POOL_SIZE = 4;

// PCG64 default multiplier (pcg64.h PCG_DEFAULT_MULTIPLIER_128)
const PCG_MULT = (0x2360ed051fc65da4n << 64n) | 0x4385df649fccf645n;

// uint32 product: (a * b) mod 2^32
const mul32 = (a: number, b: number): number => Math.imul(a, b) >>> 0;

// seed -> little-endian uint32 words (0 -> [0]), as numpy's _int_to_uint32_array
function seedWords(seed: number | bigint): number[] {
  let n = typeof seed === 'bigint' ? seed : BigInt(seed);
  if (typeof seed === 'number' && !Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  if (n < 0n) throw new RangeError(`seed must be non-negative, got ${seed}`);
  const words: number[] = [];
  if (n === 0n) words.push(0);
  while (n > 0n) {
    words.push(Number(n & 0xffffffffn));
    n >>= 32n;
  }
  return words;
}

// SeedSequence pool: hashmix each entropy word into 4 lanes, then cross-mix every lane into every other
function seedSequencePool(entropy: readonly number[]): number[] {
  let hashConst = INIT_A;
  const hashmix = (value: number): number => {
    let v = (value ^ hashConst) >>> 0;
    hashConst = mul32(hashConst, MULT_A);
    v = mul32(v, hashConst);
    return (v ^ (v >>> XSHIFT)) >>> 0;
  };
  const mix = (x: number, y: number): number => {
    const r = (mul32(MIX_MULT_L, x) - mul32(MIX_MULT_R, y)) >>> 0;
    return (r ^ (r >>> XSHIFT)) >>> 0;
  };
  const pool = new Array<number>(POOL_SIZE);
  for (let i = 0; i < POOL_SIZE; i++) pool[i] = hashmix(i < entropy.length ? entropy[i] : 0);
  for (let src = 0; src < POOL_SIZE; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) {
      if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    }
  }
  for (let src = POOL_SIZE; src < entropy.length; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
  }
  return pool;
}

// SeedSequence.generate_state(n, uint64): 2n uint32 words cycled from the pool, hashed, read little-endian
function generateState64(pool: readonly number[], n: number): bigint[] {
  let hashConst = INIT_B;
  const words: number[] = [];
  for (let i = 0; i < 2 * n; i++) {
    let v = (pool[i % pool.length] ^ hashConst) >>> 0;
    hashConst = mul32(hashConst, MULT_B);
    v = mul32(v, hashConst);
    words.push((v ^ (v >>> XSHIFT)) >>> 0);
  }
  const out: bigint[] = [];
  for (let i = 0; i < n; i++) out.push(BigInt(words[2 * i]) | (BigInt(words[2 * i + 1]) << 32n));
  return out;
}

/** numpy's PCG64 bit generator as `np.random.default_rng(seed)` builds it. */
export class NumpyPcg64 {
  private state: bigint;
  private readonly inc: bigint;
  private buffered: number | null = null;

  constructor(seed: number | bigint) {
    const [s0, s1, i0, i1] = generateState64(seedSequencePool(seedWords(seed)), 4);
    const initState = (s0 << 64n) | s1;
    const initSeq = (i0 << 64n) | i1;
    // pcg_setseq_128_srandom_r: state = 0, inc = 2 * initseq + 1, step, state += initstate, step
    this.inc = ((initSeq << 1n) | 1n) & MASK128;
    this.state = 0n;
    this.step();
    this.state = (this.state + initState) & MASK128;
    this.step();
  }

  /** the 128-bit state and increment, as numpy's `bit_generator.state['state']` */
  get internalState(): { state: bigint; inc: bigint } {
    return { state: this.state, inc: this.inc };
  }

  // state = state * M + inc (mod 2^128)
  private step(): void {
    this.state = (this.state * PCG_MULT + this.inc) & MASK128;
  }

  // XSL-RR: rotr64(high ^ low, state >> 122), after one step
  next64(): bigint {
    this.step();
    const rot = Number(this.state >> 122n);
    const x = ((this.state >> 64n) ^ this.state) & MASK64;
    return ((x >> BigInt(rot)) | (x << BigInt((64 - rot) & 63))) & MASK64;
  }

  // low half of a fresh 64-bit draw, then its high half
  next32(): number {
    if (this.buffered !== null) {
      const v = this.buffered;
      this.buffered = null;
      return v;
    }
    const v = this.next64();
    this.buffered = Number(v >> 32n);
    return Number(v & 0xffffffffn);
  }

  // random_interval(max): smallest all-ones mask >= max, draw (next32 & mask) until <= max
  interval(max: number): number {
    if (max === 0) return 0;
    if (!Number.isInteger(max) || max < 0 || max > MASK32) throw new RangeError(`interval max out of range: ${max}`);
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let value: number;
    do value = (this.next32() & mask) >>> 0;
    while (value > max);
    return value;
  }
}

// perm = arange(n); for i = n-1 .. 1: swap perm[i], perm[interval(i)]  (numpy Generator.permutation(n))
export function numpyPermutation(n: number, seed: number | bigint): number[] {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
  const rng = new NumpyPcg64(seed);
  const perm = Array.from({ length: n }, (_, k) => k);
  for (let i = n - 1; i >= 1; i--) {
    const j = rng.interval(i);
    const t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  return perm;
}

// shuffled[k] = items[perm[k]], perm = numpyPermutation(|items|, seed): HF `Dataset.shuffle(seed=seed)` order
export function seededShuffle<T>(items: readonly T[], seed: number | bigint): T[] {
  return numpyPermutation(items.length, seed).map((k) => items[k]);
}

// the first nExamples items of the seed-shuffled order (the spec's train prompts)
export function takeTrainPrompts<T>(problems: readonly T[], nExamples: number, seed: number | bigint = 0): T[] {
  if (!Number.isInteger(nExamples) || nExamples < 0) {
    throw new RangeError(`nExamples must be a non-negative integer, got ${nExamples}`);
  }
  if (nExamples > problems.length) {
    throw new RangeError(`nExamples (${nExamples}) exceeds the ${problems.length} problems available`);
  }
  return seededShuffle(problems, seed).slice(0, nExamples);
}
