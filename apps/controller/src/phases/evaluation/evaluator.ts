// Greedy evaluation of one model on every test item: the renderer's prompt, temperature 0, the spec's max_tokens
// (capped at the model's context left after the prompt), stop on the renderer's stop tokens; each completion is
// graded by libs/grading exactly as the grader does (the text without the final stop token; correct = the
// correct_answer bit). Requests go to the backend concurrently (bounded), and each finished item is appended to
// a partial file, so an interrupted evaluation resumes where it stopped; eval.jsonl is written in item order.
import type { Renderer, SamplingClient } from '@rx/backend';
import type { Problem } from '@rx/datasets';
import { gradeCompletion } from '@rx/grading';
import { mapConcurrent } from '@rx/pipeline';
import type { DecodingSettings, EvalLine } from '@rx/run-dir';

export type { EvalLine } from '@rx/run-dir';

export interface EvaluateOptions {
  client: SamplingClient;
  renderer: Renderer;
  items: readonly Problem[];
  decoding: DecodingSettings;
  concurrency: number;
  /** lines finished before (a resumed evaluation) */
  done: ReadonlyMap<string, EvalLine>;
  /** called with each finished line (appended to the partial file) */
  onLine: (line: EvalLine) => void;
  signal?: AbortSignal;
}

// endedOnStop = stop reason 'stop' and the last token is a stop token; graded text = decode(tokens without it)
export function gradeEvalCompletion(renderer: Renderer, item: Problem, tokens: number[], stopReason: 'stop' | 'length'): EvalLine {
  const last = tokens[tokens.length - 1];
  const endedOnStop = stopReason === 'stop' && last !== undefined && renderer.stopTokens.includes(last);
  const completion = renderer.decode(endedOnStop ? tokens.slice(0, -1) : tokens);
  const g = gradeCompletion(completion, item.answer, { endedOnStop });
  return { item_id: item.id, correct: g.correct, extracted: g.extracted, completion, stop_reason: stopReason, format_ok: g.formatOk, completion_tokens: tokens.length };
}

export async function evaluateItems(o: EvaluateOptions): Promise<EvalLine[]> {
  const todo = o.items.filter((it) => !o.done.has(it.id));
  const fresh = new Map<string, EvalLine>();
  await mapConcurrent(todo, o.concurrency, async (item) => {
    if (o.signal?.aborted) throw o.signal.reason instanceof Error ? o.signal.reason : new Error('interrupted');
    const prompt = o.renderer.buildPrompt(item.question);
    const maxTokens = Math.max(1, Math.min(o.decoding.max_tokens, o.decoding.max_seq_len - prompt.length));
    const [seq] = await o.client.sample(prompt, 1, { maxTokens, temperature: 0, stopTokens: o.decoding.stop_tokens, seed: o.decoding.seed });
    if (!seq) throw new Error(`the backend returned no sample for item ${item.id}`);
    const line = gradeEvalCompletion(o.renderer, item, seq.tokens, seq.stopReason);
    fresh.set(item.id, line);
    o.onLine(line);
  });
  return o.items.map((it) => (o.done.get(it.id) ?? fresh.get(it.id)) as EvalLine);
}
