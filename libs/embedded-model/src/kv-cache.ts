// Host-side KV cache for decoding: keys and values per layer in Float32Arrays laid out
// [(b * H + h) * capacity + position] * d, and the one-query attention of a decoding step computed over them
// (a step attends 64 rows x 4 heads x <= 128 positions x 16 dims; on wasm, batched products and concatenation
// of growing cache tensors cost far more than these loops).

export class KvCache {
  readonly k: Float32Array[];
  readonly v: Float32Array[];
  /** positions written so far (the same for every row: prompts are left-padded) */
  length = 0;

  constructor(
    readonly batch: number,
    readonly heads: number,
    readonly width: number,
    readonly capacity: number,
    layers: number,
    /** leading padding positions of each row, never attended to */
    readonly pads: readonly number[],
  ) {
    const size = batch * width * capacity;
    this.k = Array.from({ length: layers }, () => new Float32Array(size));
    this.v = Array.from({ length: layers }, () => new Float32Array(size));
  }

  /** stores rows [B*T, W] of keys and values for positions start..start+T-1 */
  write(layer: number, start: number, time: number, keys: Float32Array, values: Float32Array): void {
    if (start + time > this.capacity) throw new Error(`KV cache of ${this.capacity} positions overflows at ${start + time}`);
    const d = this.width / this.heads;
    for (let b = 0; b < this.batch; b++) {
      for (let t = 0; t < time; t++) {
        const src = (b * time + t) * this.width;
        for (let h = 0; h < this.heads; h++) {
          const dst = ((b * this.heads + h) * this.capacity + start + t) * d;
          this.k[layer].set(keys.subarray(src + h * d, src + (h + 1) * d), dst);
          this.v[layer].set(values.subarray(src + h * d, src + (h + 1) * d), dst);
        }
      }
    }
  }

  /** softmax(q k_j / sqrt(d)) v_j over positions pads[b] <= j < upto, for queries q [B, W]; returns [B, W] */
  attend(layer: number, q: Float32Array, upto: number): Float32Array {
    const { batch, heads, width, capacity } = this;
    const d = width / heads;
    const scale = 1 / Math.sqrt(d);
    const keys = this.k[layer];
    const values = this.v[layer];
    const out = new Float32Array(batch * width);
    const scores = new Float64Array(upto);
    for (let b = 0; b < batch; b++) {
      const from = this.pads[b];
      for (let h = 0; h < heads; h++) {
        const qo = b * width + h * d;
        const base = (b * heads + h) * capacity * d;
        let max = -Infinity;
        for (let j = from; j < upto; j++) {
          let s = 0;
          const ko = base + j * d;
          for (let i = 0; i < d; i++) s += q[qo + i] * keys[ko + i];
          s *= scale;
          scores[j] = s;
          if (s > max) max = s;
        }
        let sum = 0;
        for (let j = from; j < upto; j++) {
          scores[j] = Math.exp(scores[j] - max);
          sum += scores[j];
        }
        for (let i = 0; i < d; i++) {
          let acc = 0;
          for (let j = from; j < upto; j++) acc += scores[j] * values[base + j * d + i];
          out[qo + i] = acc / sum;
        }
      }
    }
    return out;
  }
}
