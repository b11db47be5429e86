// The Qwen3.5 chat renderer with thinking disabled (tinker-cookbook's Qwen3_5DisableThinkingRenderer, i.e. the
// HF template with enable_thinking=False): messages as `<|im_start|>{role}\n{content}<|im_end|>`, separated by
// `\n`, and the generation prompt `<|im_start|>assistant\n<think>\n\n</think>\n\n`; sampling stops on
// <|im_end|>. As in the cookbook, each message header, each message body and the generation suffix are
// tokenised separately and concatenated (no BOS token for Qwen).
import { gsm8kConversation, type ChatMessage } from './gsm8k-prompt';
import type { TextTokenizer } from './qwen3-renderer.tokenizer';
import type { Renderer } from './renderer';

export const QWEN_IM_START = '<|im_start|>';
export const QWEN_IM_END = '<|im_end|>';
/** the empty thinking block that opens an assistant turn when thinking is disabled */
export const QWEN_EMPTY_THINK = '<think>\n\n</think>\n\n';

/**
 * The text pieces of a generation prompt, each tokenised on its own: per message a header
 * (`\n` before all but the first) and a body (content trimmed, then <|im_end|>), then the assistant header
 * with the empty thinking block. Assistant turns after the last user turn get the empty block too.
 */
export function qwen3_5PromptSegments(messages: ChatMessage[]): string[] {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const segments: string[] = [];
  messages.forEach((m, i) => {
    segments.push(`${i > 0 ? '\n' : ''}${QWEN_IM_START}${m.role}\n`);
    const content = m.content.trim();
    const think = m.role === 'assistant' && i > lastUser && !content.includes('</think>') ? QWEN_EMPTY_THINK : '';
    segments.push(`${think}${content}${QWEN_IM_END}`);
  });
  segments.push(`${messages.length > 0 ? '\n' : ''}${QWEN_IM_START}assistant\n${QWEN_EMPTY_THINK}`);
  return segments;
}

export class Qwen3_5Renderer implements Renderer {
  readonly name = 'qwen3_5_disable_thinking';
  readonly stopTokens: number[];

  constructor(private readonly tokenizer: TextTokenizer) {
    const imEnd = tokenizer.tokenToId(QWEN_IM_END);
    if (imEnd === undefined || tokenizer.encode(QWEN_IM_END).length !== 1) {
      throw new Error(`this tokenizer has no single ${QWEN_IM_END} token; it is not a Qwen chat tokenizer`);
    }
    this.stopTokens = [imEnd];
  }

  /** Tokens of the generation prompt for any conversation. */
  renderGenerationPrompt(messages: ChatMessage[]): number[] {
    return qwen3_5PromptSegments(messages).flatMap((s) => this.tokenizer.encode(s));
  }

  /** The cookbook's GSM8K prompt: one-shot prefix, question + ` Write your answer in \boxed{} format.` */
  buildPrompt(question: string): number[] {
    return this.renderGenerationPrompt(gsm8kConversation(question));
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  /** Text of the tokens, special tokens (such as a final <|im_end|>) written out. */
  decode(tokens: number[]): string {
    return this.tokenizer.decode(tokens);
  }
}
