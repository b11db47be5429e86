// Independent float64 reference of the GS1 kernel baseline, for the tests and for the run-time correctness preflight
// (its sha256 is recorded as the reference revision). Written apart from kernel-baseline.ts on purpose: plain arrays and index loops, Welford moments, a full pairwise weight matrix, the leave-one-out mean
// summed explicitly, no shared helpers.

export interface ReferencePoint {
  id: string;
  r: number;
  x: number; // phi[0]
  y: number; // phi[1]
}

export interface ReferenceResult {
  b: number[];
  a: number[];
  neff: number[];
  fellBack: boolean[];
}

// Reference: window = batch then earlier (most recent first) up to cap; z by Welford mean/variance (divide by n);
// W[i][j] = exp(-dist2(z_i, z_j) / (2 h^2)), j != i; mass < 1e-3 -> plain leave-one-out mean.
export function referenceKernelBaseline(
  batch: ReferencePoint[],
  earlier: ReferencePoint[],
  h: number,
  cap: number,
): ReferenceResult {
  const pts: ReferencePoint[] = [];
  for (let k = 0; k < batch.length; k++) pts.push(batch[k]);
  let k = 0;
  while (pts.length < cap && k < earlier.length) {
    pts.push(earlier[k]);
    k++;
  }
  const n = pts.length;

  // Welford's running mean and sum of squared deviations, one feature at a time
  const mu: number[] = [0, 0];
  const m2: number[] = [0, 0];
  for (let f = 0; f < 2; f++) {
    let mean = 0;
    let sq = 0;
    for (let t = 0; t < n; t++) {
      const v = f === 0 ? pts[t].x : pts[t].y;
      const delta = v - mean;
      mean = mean + delta / (t + 1);
      sq = sq + delta * (v - mean);
    }
    mu[f] = mean;
    m2[f] = sq;
  }
  const sd: number[] = [];
  for (let f = 0; f < 2; f++) {
    const s = Math.sqrt(m2[f] / n);
    if (s < 1e-12) sd.push(1);
    else sd.push(s);
  }
  const zx: number[] = [];
  const zy: number[] = [];
  for (let t = 0; t < n; t++) {
    zx.push((pts[t].x - mu[0]) / sd[0]);
    zy.push((pts[t].y - mu[1]) / sd[1]);
  }

  // full weight matrix over the window (the diagonal is unused)
  const W: number[][] = [];
  for (let i = 0; i < n; i++) {
    const row: number[] = [];
    for (let j = 0; j < n; j++) {
      const dx = zx[i] - zx[j];
      const dy = zy[i] - zy[j];
      row.push(Math.exp(-(dx * dx + dy * dy) / (2 * h * h)));
    }
    W.push(row);
  }

  const out: ReferenceResult = { b: [], a: [], neff: [], fellBack: [] };
  for (let i = 0; i < batch.length; i++) {
    let s = 0;
    let s2 = 0;
    let sr = 0;
    for (let j = 0; j < n; j++) {
      if (i !== j) {
        s += W[i][j];
        s2 += W[i][j] * W[i][j];
        sr += W[i][j] * pts[j].r;
      }
    }
    let base: number;
    const fb = s < 1e-3;
    if (fb) {
      let total = 0;
      let count = 0;
      for (let j = 0; j < n; j++) {
        if (i !== j) {
          total += pts[j].r;
          count += 1;
        }
      }
      base = total / count;
    } else {
      base = sr / s;
    }
    out.b.push(base);
    out.a.push(pts[i].r - base);
    out.neff.push(s2 === 0 ? 0 : (s * s) / s2);
    out.fellBack.push(fb);
  }
  return out;
}
