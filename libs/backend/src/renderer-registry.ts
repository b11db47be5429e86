// rendererFor(baseModel): the renderer of a base model. Qwen3.5 models use the chat renderer with thinking
// disabled over their Hugging Face tokenizer (a local tokenizer.json, or fetched from the hub); the embedded
// character model uses charRenderer.
import { charRenderer } from './char-renderer';
import { Qwen3_5Renderer } from './qwen3-renderer';
import { loadHfTokenizer, type TokenizerSource } from './qwen3-renderer.tokenizer';
import type { Renderer } from './renderer';

/** the embedded character model, by the name in specs/embedded.json and the one @rx/embedded-model serves */
export const CHAR_BASE_MODELS: readonly string[] = ['rx-embedded/char-lm', 'rx/char-lm'];

export interface RendererOptions {
  /** a tokenizer.json (or a folder with one) for Hugging Face models; without it the tokenizer is fetched from the hub */
  tokenizerPath?: string;
  hub?: Omit<Extract<TokenizerSource, { hubModel: string }>, 'hubModel'>;
}

export class UnknownBaseModelError extends Error {
  override readonly name = 'UnknownBaseModelError';
}

/** True for the Qwen3.5 family (Qwen/Qwen3.5-2B, …). */
export function isQwen3_5(baseModel: string): boolean {
  return /^Qwen\/Qwen3\.5-/.test(baseModel);
}

export async function rendererFor(baseModel: string, options: RendererOptions = {}): Promise<Renderer> {
  if (CHAR_BASE_MODELS.includes(baseModel)) return charRenderer;
  if (isQwen3_5(baseModel)) {
    const source: TokenizerSource = options.tokenizerPath ? { path: options.tokenizerPath } : { hubModel: baseModel, ...options.hub };
    return new Qwen3_5Renderer(await loadHfTokenizer(source));
  }
  throw new UnknownBaseModelError(`no renderer for base model '${baseModel}'; known: ${[...CHAR_BASE_MODELS, 'Qwen/Qwen3.5-*'].join(', ')}`);
}
