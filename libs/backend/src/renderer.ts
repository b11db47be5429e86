// Turns a problem into generation-prompt tokens and completion tokens back into text, for one model family.
// The embedded model uses a character vocabulary (char-renderer.ts); Qwen3.5 uses its chat template with
// thinking disabled (qwen3-renderer.ts). rendererFor(baseModel) picks one.

export interface Renderer {
  readonly name: string;
  /** full generation prompt for a question: prefix, question, the answer instruction, assistant header */
  buildPrompt(question: string): number[];
  encode(text: string): number[];
  decode(tokens: number[]): string;
  /** sampling stops after one of these tokens; a completion is well formed only if it ended on one */
  readonly stopTokens: number[];
}
