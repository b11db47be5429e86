// A seeded generator of our own (splitmix32 over a 32-bit counter): the same (seed, stream) gives the same
// numbers in every process, unlike Math.random or tfjs's random ops. Used for weight init and for sampling.

/** 32-bit avalanche of one word (the splitmix32 / murmur3 finaliser) */
function mix32(x: number): number {
  let z = x >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Prng {
  private state: number;
  private spareNormal: number | null = null;

  /** seed: any safe integer (low and high 32 bits both count); stream: an independent sub-sequence (a row, a tensor) */
  constructor(seed: number, stream = 0) {
    if (!Number.isSafeInteger(seed)) throw new Error(`seed must be a safe integer, got ${seed}`);
    if (!Number.isSafeInteger(stream) || stream < 0) throw new Error(`stream must be a non-negative safe integer, got ${stream}`);
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 4294967296) >>> 0;
    const slo = stream >>> 0;
    const shi = Math.floor(stream / 4294967296) >>> 0;
    this.state = mix32(mix32(mix32(mix32(lo ^ 0x243f6a88) ^ hi) ^ slo ^ 0x85a308d3) ^ shi);
  }

  /** next 32-bit unsigned integer */
  nextU32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    return mix32(this.state);
  }

  /** uniform in [0, 1) with 53 random bits */
  uniform(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** standard normal (Box-Muller, pairs) */
  normal(): number {
    if (this.spareNormal !== null) {
      const z = this.spareNormal;
      this.spareNormal = null;
      return z;
    }
    let u = this.uniform();
    while (u <= 0) u = this.uniform();
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
}
