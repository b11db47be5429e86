// Scores a policy on arith problems with the cookbook reward: greedy exact-match accuracy (the eval's bit) and
// mean training reward of temperature-1 samples. Works with any batch sampler (raw weights or a sampling client).
import { CHAR_EOS, charPrompt, decodeChars, type SampledSequence, type SampleParams } from '@rx/backend';
import { arithDataset, DEV_SPLIT_SIZE, devSplit, type Problem } from '@rx/datasets';
import { CHAR_LM_CONFIG, disposeTensors, sampleBatch, toTensors, type ParamSet } from '@rx/embedded-model';
import { gradeCompletion } from '@rx/grading';

export type BatchSampler = (prompts: number[][], params: SampleParams) => Promise<SampledSequence[]> | SampledSequence[];

export interface ArithScore {
  n: number;
  /** mean correct_answer bit */
  accuracy: number;
  /** mean reward format_coef * (correct_format - 1) + correct_answer */
  meanReward: number;
  /** fraction of completions in the requested format (ended on the stop token, a \boxed{} answer) */
  formatOk: number;
  /** per-problem correct_answer bits, in the order given */
  correct: boolean[];
}

/** completion text without its stop token, and whether it ended on it */
export function completionText(s: SampledSequence): { text: string; endedOnStop: boolean } {
  const endedOnStop = s.stopReason === 'stop' && s.tokens[s.tokens.length - 1] === CHAR_EOS;
  return { text: decodeChars(endedOnStop ? s.tokens.slice(0, -1) : s.tokens), endedOnStop };
}

export async function scoreArith(sample: BatchSampler, problems: readonly Problem[], params: { temperature: number; seed?: number; maxTokens?: number }): Promise<ArithScore> {
  const prompts = problems.map((p) => charPrompt(p.question));
  const seqs = await sample(prompts, { maxTokens: params.maxTokens ?? 128, temperature: params.temperature, seed: params.seed ?? 0, stopTokens: [CHAR_EOS] });
  const correct: boolean[] = [];
  let reward = 0;
  let formatOk = 0;
  seqs.forEach((s, i) => {
    const { text, endedOnStop } = completionText(s);
    const g = gradeCompletion(text, problems[i].answer, { endedOnStop });
    if (g.formatOk) formatOk += 1;
    correct.push(g.correct);
    reward += g.reward;
  });
  const n = problems.length;
  return { n, accuracy: correct.filter(Boolean).length / n, meanReward: reward / n, formatOk: formatOk / n, correct };
}

/** The controller's arith dev split: the tail of the seed-0 shuffle of the seed-0 train split (TRAIN_SHUFFLE_SEED 0). */
export function arithDevProblems(): Problem[] {
  return devSplit(arithDataset({ split: 'train', seed: 0 }), 0, DEV_SPLIT_SIZE, 0);
}

/** A base model's weights scored as pretraining reports them: greedy accuracy and format, temperature-1 accuracy and reward. */
export async function scoreBaseParams(params: ParamSet, problems: Problem[]) {
  const w = { cfg: CHAR_LM_CONFIG, base: toTensors(params), loraScale: 0, trainBase: true };
  try {
    const greedy = await scoreArith((p, sp) => sampleBatch(w, p, sp), problems, { temperature: 0 });
    const sampled = await scoreArith((p, sp) => sampleBatch(w, p, sp), problems, { temperature: 1, seed: 1 });
    return { greedyAccuracy: greedy.accuracy, greedyFormatOk: greedy.formatOk, sampledReward: sampled.meanReward, sampledAccuracy: sampled.accuracy };
  } finally {
    disposeTensors(w.base);
  }
}
