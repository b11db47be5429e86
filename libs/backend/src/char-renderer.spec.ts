import { extractBoxed } from '@rx/grading';
import {
  CHAR_BOS,
  CHAR_EOS,
  CHAR_UNK,
  CHAR_VOCAB,
  CHAR_VOCAB_SIZE,
  charCompletionText,
  charPrompt,
  charRenderer,
  decodeChars,
  encodeChars,
} from './char-renderer';

describe('charRenderer', () => {
  it('has at most 64 distinct symbols including the math punctuation and the special tokens', () => {
    expect(CHAR_VOCAB_SIZE).toBeLessThanOrEqual(64);
    expect(new Set(CHAR_VOCAB).size).toBe(CHAR_VOCAB_SIZE);
    for (const c of '0123456789abcdefghijklmnopqrstuvwxyz \\{}+-*=?.,') expect(CHAR_VOCAB).toContain(c);
    expect(charRenderer.stopTokens).toEqual([CHAR_EOS]);
  });

  it('round-trips text through encode and decode, folding upper case', () => {
    const text = 'sam has 12 pens, buys 7. how many now? 12+7=19. \\boxed{19}';
    expect(decodeChars(encodeChars(text))).toBe(text);
    expect(encodeChars('Tom')).toEqual(encodeChars('tom'));
    expect(encodeChars('é')).toEqual([CHAR_UNK]);
    expect(decodeChars([CHAR_BOS, ...encodeChars('ab'), CHAR_EOS])).toBe('ab');
    expect(() => decodeChars([CHAR_VOCAB_SIZE])).toThrow('outside the character vocabulary');
  });

  it('builds a short prompt: <bos>, the question, the boxed instruction, the header', () => {
    const p = charPrompt('ann has 3 cups and buys 4. how many now?');
    expect(p[0]).toBe(CHAR_BOS);
    expect(decodeChars(p)).toBe('ann has 3 cups and buys 4. how many now? answer in \\boxed{}.\n');
    expect(charRenderer.buildPrompt('x')).toEqual(charPrompt('x'));
  });

  it('turns a GSM8K-style answer into the completion the model learns, graded by the boxed extractor', () => {
    const c = charCompletionText('3+4=7. 7*2=14.\n#### 14');
    expect(c).toBe('3+4=7. 7*2=14. \\boxed{14}');
    expect(extractBoxed(c)).toBe('14');
    expect(charCompletionText('#### 1,200')).toBe('\\boxed{1200}');
    expect(() => charCompletionText('no marker')).toThrow("no '####'");
  });
});
