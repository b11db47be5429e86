// The GSM8K prompt of tinker-cookbook's math_rl recipe (MathEnv): the standard one-shot prefix (the
// strawberry example), then the question followed by the answer instruction, as chat messages. Re-implemented
// from the cookbook's `MathEnv.standard_fewshot_prefix()` and `MathEnv.question_suffix()`.

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** appended to every question (MathEnv.question_suffix) */
export const BOXED_ANSWER_SUFFIX = ' Write your answer in \\boxed{} format.';

/** MathEnv.standard_fewshot_prefix(): one worked example in the expected \boxed{} format */
export function standardFewshotPrefix(): ChatMessage[] {
  return [
    { role: 'user', content: `How many r's are in strawberry?${BOXED_ANSWER_SUFFIX}` },
    {
      role: 'assistant',
      content:
        "Let's spell the word out and number all the letters: 1) s 2) t 3) r 4) a 5) w 6) b 7) e 8) r 9) r 10) y. " +
        "We have r's at positions 3, 8, and 9. \\boxed{3}",
    },
  ];
}

/** The conversation for one GSM8K question: the one-shot prefix, then the question with the suffix. */
export function gsm8kConversation(question: string): ChatMessage[] {
  return [...standardFewshotPrefix(), { role: 'user', content: question + BOXED_ANSWER_SUFFIX }];
}
