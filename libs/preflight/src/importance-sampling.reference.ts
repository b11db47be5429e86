// Independent float64 reference for the importance-sampling loss and its gradient, written separately from
// importance-sampling.ts for the preflight and its tests: flattens first, then one loop, ratio via log-space difference.

export function referenceIsLoss(sampling: number[][], advantages: number[][], logprobs: number[][]): { loss: number; gradient: number[] } {
  const flatS = ([] as number[]).concat(...sampling);
  const flatA = ([] as number[]).concat(...advantages);
  const flatL = ([] as number[]).concat(...logprobs);
  if (flatS.length !== flatA.length || flatS.length !== flatL.length) throw new Error('reference: ragged inputs');
  const gradient = new Array<number>(flatS.length);
  let total = 0;
  for (let k = 0; k < flatS.length; k++) {
    const ratio = Math.exp(flatL[k] - flatS[k]);
    gradient[k] = -ratio * flatA[k];
    total += gradient[k];
  }
  return { loss: total, gradient };
}
