// The reward of the cookbook's ProblemEnv.step for its MathEnv on GSM8K (problem_env.py, math_env.py).
import { extractBoxed } from './boxed-answer';
import { extractGroundTruth } from './gsm8k-answer';
import { isEquivalent } from './math-grade';

export interface GradeResult {
  /** correct_answer: the boxed answer grades equal to the reference (eval's exact-match bit). */
  correct: boolean;
  /** correct_format: ended on the renderer's stop sequence and holds a well-formed \boxed{} answer. */
  formatOk: boolean;
  /** The content of the last \boxed{}, null when absent or when the braces are unbalanced. */
  extracted: string | null;
  /** The training reward. */
  reward: number;
}

export const DEFAULT_FORMAT_COEF = 0.1;

/** Grade one completion (the parsed message text, stop sequence removed) against a GSM8K dataset answer. */
export function gradeCompletion(
  completion: string,
  datasetAnswer: string,
  opts: { endedOnStop: boolean; formatCoef?: number },
): GradeResult {
  const formatCoef = opts.formatCoef ?? DEFAULT_FORMAT_COEF;
  const groundTruth = extractGroundTruth(datasetAnswer);
  const extracted = extractBoxed(completion);
  const formatOk = opts.endedOnStop && extracted !== null;
  const correct = extracted !== null && isEquivalent(extracted, groundTruth);
  // reward = format_coef * (correct_format - 1) + correct_answer
  const reward = formatCoef * ((formatOk ? 1 : 0) - 1) + (correct ? 1 : 0);
  return { correct, formatOk, extracted, reward };
}
