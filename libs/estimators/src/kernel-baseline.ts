// GS1 kernel baseline (the treatment arm), exactly as pinned in issue 2. float64 throughout.
import type { RolloutAdvantage, ScoredRollout } from './rollout';

/** The pre-registered window: the current batch plus the most recent earlier rollouts, 256 in all at most. */
export const DEFAULT_WINDOW_SIZE = 256;
/** Below this kernel mass the baseline falls back to the leave-one-out window mean. */
export const KERNEL_MASS_FLOOR = 1e-3;
/** A feature whose population std over the window is below this is not scaled (std counts as 1). */
export const STD_FLOOR = 1e-12;

export interface KernelOptions {
  /** h in w_ij = exp(-||z_i - z_j||^2 / (2 h^2)); 0.5 pre-registered */
  bandwidth: number;
  /** most rollouts in the window, batch included (default 256) */
  windowSize?: number;
}

// window = batch ++ earlier[0 .. windowSize - |batch|), earlier most recent first
function buildWindow(
  batch: readonly ScoredRollout[],
  earlier: readonly ScoredRollout[],
  windowSize: number,
): ScoredRollout[] {
  if (!Number.isInteger(windowSize) || windowSize < 2) {
    throw new RangeError(`windowSize must be an integer >= 2, got ${windowSize}`);
  }
  if (batch.length > windowSize) {
    throw new RangeError(`the batch has ${batch.length} rollouts, more than the window of ${windowSize}`);
  }
  const inBatch = new Set<string>();
  for (const r of batch) {
    if (inBatch.has(r.rolloutId)) throw new RangeError(`rollout ${r.rolloutId} appears twice in the batch`);
    inBatch.add(r.rolloutId);
  }
  const window = [...batch];
  for (const r of earlier) {
    if (window.length >= windowSize) break;
    if (inBatch.has(r.rolloutId)) {
      throw new RangeError(
        `rollout ${r.rolloutId} is both in the batch and in the earlier rollouts; pass the window as it was before ` +
          'this batch (or use kernelAdvantagesForWindow)',
      );
    }
    window.push(r);
  }
  for (const r of window) {
    if (!Number.isFinite(r.reward) || !Number.isFinite(r.phi[0]) || !Number.isFinite(r.phi[1])) {
      throw new RangeError(`rollout ${r.rolloutId}: reward and phi must be finite numbers`);
    }
  }
  return window;
}

// z_jk = (phi_jk - mean_k) / s_k, s_k = population std of feature k over the window, s_k < 1e-12 -> 1
function standardise(window: readonly ScoredRollout[]): Array<[number, number]> {
  const n = window.length;
  const mean = [0, 0];
  for (const r of window) {
    mean[0] += r.phi[0];
    mean[1] += r.phi[1];
  }
  mean[0] /= n;
  mean[1] /= n;
  const variance = [0, 0];
  for (const r of window) {
    variance[0] += (r.phi[0] - mean[0]) ** 2;
    variance[1] += (r.phi[1] - mean[1]) ** 2;
  }
  const scale = variance.map((v) => {
    const std = Math.sqrt(v / n);
    return std < STD_FLOOR ? 1 : std;
  });
  return window.map((r) => [(r.phi[0] - mean[0]) / scale[0], (r.phi[1] - mean[1]) / scale[1]]);
}

// b_i = sum_{j != i} w_ij r_j / sum_{j != i} w_ij, w_ij = exp(-||z_i - z_j||^2 / (2 h^2)); mass < 1e-3 -> b_i = mean_{j != i} r_j;
// A_i = r_i - b_i; n_i = (sum w_ij)^2 / sum w_ij^2 (0 when every weight underflows to 0)
export function kernelBaseline(
  batch: readonly ScoredRollout[],
  earlier: readonly ScoredRollout[],
  opts: KernelOptions,
): RolloutAdvantage[] {
  const h = opts.bandwidth;
  if (!Number.isFinite(h) || h <= 0) throw new RangeError(`bandwidth must be a positive number, got ${h}`);
  const window = buildWindow(batch, earlier, opts.windowSize ?? DEFAULT_WINDOW_SIZE);
  const n = window.length;
  if (batch.length > 0 && n < 2) {
    throw new RangeError('the kernel baseline needs at least 2 rollouts in the window (the batch plus earlier ones)');
  }
  const z = standardise(window);
  let rewardSum = 0;
  for (const r of window) rewardSum += r.reward;
  const twoH2 = 2 * h * h;

  return batch.map((rollout, i) => {
    let mass = 0;
    let massSq = 0;
    let weighted = 0;
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const d0 = z[i][0] - z[j][0];
      const d1 = z[i][1] - z[j][1];
      const w = Math.exp(-(d0 * d0 + d1 * d1) / twoH2);
      mass += w;
      massSq += w * w;
      weighted += w * window[j].reward;
    }
    const fallback = mass < KERNEL_MASS_FLOOR;
    const baseline = fallback ? (rewardSum - rollout.reward) / (n - 1) : weighted / mass;
    return {
      rolloutId: rollout.rolloutId,
      baseline,
      advantage: rollout.reward - baseline,
      effectiveNeighbors: massSq > 0 ? (mass * mass) / massSq : 0,
      fallback,
      dropped: false,
    };
  });
}
