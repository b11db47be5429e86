// The renderer of the embedded character model: a fixed vocabulary of 62 symbols (4 special tokens, digits,
// lowercase letters, space, newline, punctuation), a short GSM8K-like prompt and the completion format the
// model is pretrained on: `12+7=19. 19-5=14. \boxed{14}` followed by the stop token.
import type { Renderer } from './renderer';

export const CHAR_PAD = 0;
export const CHAR_BOS = 1;
/** the stop token: a completion is well formed only if it ends on it */
export const CHAR_EOS = 2;
/** any character outside the vocabulary (upper case is folded to lower case first) */
export const CHAR_UNK = 3;

const SPECIAL_SYMBOLS = ['<pad>', '<bos>', '<eos>', '<unk>'] as const;
const CHARACTERS = '0123456789abcdefghijklmnopqrstuvwxyz \n\\{}+-*=?.,$%\'()/:;!"';

/** token id -> symbol; ids 0-3 are the special tokens */
export const CHAR_VOCAB: readonly string[] = [...SPECIAL_SYMBOLS, ...CHARACTERS];
export const CHAR_VOCAB_SIZE = CHAR_VOCAB.length;

/** the answer instruction appended to every question (the cookbook's ` Write your answer in \boxed{} format.`, shortened for a 128-token context) */
export const CHAR_INSTRUCTION = ' answer in \\boxed{}.';
/** the assistant header: the prompt ends here and the completion starts */
export const CHAR_ASSISTANT_HEADER = '\n';

const CHAR_TO_ID = new Map<string, number>([...CHARACTERS].map((c, i) => [c, SPECIAL_SYMBOLS.length + i]));

/** Text to token ids, one per character; upper case folds to lower case, other unknown characters map to <unk>. */
export function encodeChars(text: string): number[] {
  const ids: number[] = [];
  for (const c of text.toLowerCase()) ids.push(CHAR_TO_ID.get(c) ?? CHAR_UNK);
  return ids;
}

/** Token ids to text; special tokens are dropped except <unk>, written as `?`; ids outside the vocabulary throw. */
export function decodeChars(tokens: readonly number[]): string {
  let text = '';
  for (const t of tokens) {
    if (!Number.isInteger(t) || t < 0 || t >= CHAR_VOCAB_SIZE) throw new Error(`token ${t} is outside the character vocabulary (0..${CHAR_VOCAB_SIZE - 1})`);
    if (t === CHAR_UNK) text += '?';
    else if (t >= SPECIAL_SYMBOLS.length) text += CHAR_VOCAB[t];
  }
  return text;
}

/** <bos> question instruction <header>: the generation prompt */
export function charPrompt(question: string): number[] {
  return [CHAR_BOS, ...encodeChars(question.trim() + CHAR_INSTRUCTION + CHAR_ASSISTANT_HEADER)];
}

/**
 * The supervised completion for a GSM8K-style answer (`<work>\n#### N`): `<work> \boxed{N}`, without the stop
 * token (append CHAR_EOS for training). Throws when the answer has no `####` line.
 */
export function charCompletionText(answer: string): string {
  const at = answer.lastIndexOf('####');
  if (at < 0) throw new Error(`answer has no '####' line: ${JSON.stringify(answer)}`);
  const work = answer.slice(0, at).trim().replace(/\s+/g, ' ');
  const value = answer.slice(at + 4).trim().replace(/,/g, '');
  return `${work ? work + ' ' : ''}\\boxed{${value}}`;
}

export const charRenderer: Renderer = {
  name: 'char',
  buildPrompt: charPrompt,
  encode: encodeChars,
  decode: decodeChars,
  stopTokens: [CHAR_EOS],
};
