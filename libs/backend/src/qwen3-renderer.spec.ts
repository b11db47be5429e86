// The Qwen3.5 renderer (thinking disabled) with the cookbook GSM8K prompt, over a tiny byte-level BPE
// tokenizer.json fixture that has Qwen's special tokens (libs/backend/testing/fixtures/tiny-qwen-tokenizer.json).
import path from 'node:path';
import { BOXED_ANSWER_SUFFIX, gsm8kConversation, standardFewshotPrefix } from './gsm8k-prompt';
import { Qwen3_5Renderer, qwen3_5PromptSegments } from './qwen3-renderer';
import { loadTokenizerFromPath } from './qwen3-renderer.tokenizer';

const FIXTURE = path.join(__dirname, '..', 'testing', 'fixtures', 'tiny-qwen-tokenizer.json');

describe('gsm8k prompt', () => {
  it('is the cookbook one-shot prefix and the question with the boxed suffix', () => {
    expect(BOXED_ANSWER_SUFFIX).toBe(' Write your answer in \\boxed{} format.');
    const convo = gsm8kConversation('What is 2+3?');
    expect(convo.slice(0, 2)).toEqual(standardFewshotPrefix());
    expect(convo[0]).toEqual({ role: 'user', content: "How many r's are in strawberry? Write your answer in \\boxed{} format." });
    expect(convo[1]!.content).toMatch(/^Let's spell the word out .* We have r's at positions 3, 8, and 9\. \\boxed\{3\}$/);
    expect(convo[2]).toEqual({ role: 'user', content: 'What is 2+3? Write your answer in \\boxed{} format.' });
  });
});

describe('Qwen3_5Renderer', () => {
  const tokenizer = loadTokenizerFromPath(FIXTURE);
  const renderer = new Qwen3_5Renderer(tokenizer);
  const question = '  Natalia sold 48 clips in April. How many did she sell?';
  const expected =
    "<|im_start|>user\nHow many r's are in strawberry? Write your answer in \\boxed{} format.<|im_end|>\n" +
    "<|im_start|>assistant\nLet's spell the word out and number all the letters: 1) s 2) t 3) r 4) a 5) w 6) b 7) e 8) r 9) r 10) y. We have r's at positions 3, 8, and 9. \\boxed{3}<|im_end|>\n" +
    '<|im_start|>user\nNatalia sold 48 clips in April. How many did she sell? Write your answer in \\boxed{} format.<|im_end|>\n' +
    '<|im_start|>assistant\n<think>\n\n</think>\n\n';

  it('renders the chat template with an empty thinking block', () => {
    expect(qwen3_5PromptSegments(gsm8kConversation(question)).join('')).toBe(expected);
    expect(renderer.decode(renderer.buildPrompt(question))).toBe(expected);
  });

  it('trims the whole message after the suffix is appended, as the cookbook does', () => {
    const text = qwen3_5PromptSegments(gsm8kConversation(' sell?  \n')).join('');
    expect(text).toContain('<|im_start|>user\nsell?  \n Write your answer in \\boxed{} format.<|im_end|>');
  });

  it('tokenises header, body and generation suffix separately, special tokens as single ids', () => {
    const tokens = renderer.buildPrompt(question);
    const segments = qwen3_5PromptSegments(gsm8kConversation(question));
    expect(tokens).toEqual(segments.flatMap((s) => tokenizer.encode(s)));
    const imStart = tokenizer.tokenToId('<|im_start|>')!;
    const imEnd = tokenizer.tokenToId('<|im_end|>')!;
    expect(tokens.filter((t) => t === imStart)).toHaveLength(4);
    expect(tokens.filter((t) => t === imEnd)).toHaveLength(3);
    const think = [tokenizer.tokenToId('<think>')!, tokenizer.tokenToId('</think>')!];
    expect(tokens.slice(-4)).toEqual([think[0], tokenizer.encode('\n\n')[0], think[1], tokenizer.encode('\n\n')[0]]);
  });

  it('stops on <|im_end|> and decodes completions', () => {
    const imEnd = tokenizer.tokenToId('<|im_end|>')!;
    expect(renderer.stopTokens).toEqual([imEnd]);
    const completion = [...renderer.encode('So 48 + 24 = 72. \\boxed{72}'), imEnd];
    expect(renderer.decode(completion)).toBe('So 48 + 24 = 72. \\boxed{72}<|im_end|>');
    expect(renderer.decode(renderer.encode('héllo wörld'))).toBe('héllo wörld');
  });

  it('gives assistant turns after the last user turn an empty thinking block', () => {
    const segments = qwen3_5PromptSegments([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    expect(segments.join('')).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nhello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
  });

  it('refuses a tokenizer without Qwen special tokens', () => {
    const plain = { encode: (t: string) => [...t].map((c) => c.charCodeAt(0)), decode: () => '', tokenToId: () => undefined };
    expect(() => new Qwen3_5Renderer(plain)).toThrow('this tokenizer has no single <|im_end|> token');
  });
});
