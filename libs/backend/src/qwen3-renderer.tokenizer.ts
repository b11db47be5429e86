// Tokenizers for Hugging Face models through @huggingface/tokenizers (pure JS): from a local tokenizer.json
// (or a folder holding one), or fetched from the public hub (`Qwen/Qwen3.5-2B`) and optionally cached.
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';

export interface TextTokenizer {
  /** token ids of `text`, special tokens written in the text included, nothing added around it */
  encode(text: string): number[];
  decode(tokens: number[]): string;
  /** id of a single token (special tokens such as <|im_end|>), if the vocabulary has it */
  tokenToId(token: string): number | undefined;
}

export type TokenizerSource =
  | { path: string }
  | {
      hubModel: string;
      revision?: string;
      /** default https://huggingface.co */
      endpoint?: string;
      /** a Hugging Face token for gated models */
      token?: string;
      /** where to keep the downloaded files; read from there when present */
      cacheDir?: string;
      fetch?: typeof fetch;
    };

export class TokenizerLoadError extends Error {
  override readonly name = 'TokenizerLoadError';
}

function wrap(tokenizer: Tokenizer): TextTokenizer {
  return {
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids,
    decode: (tokens) => tokenizer.decode(tokens, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
    tokenToId: (token) => tokenizer.token_to_id(token),
  };
}

function parseJsonFile(file: string): object {
  try {
    const value: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (!value || typeof value !== 'object') throw new Error('not a JSON object');
    return value;
  } catch (err) {
    throw new TokenizerLoadError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Loads tokenizer.json (and tokenizer_config.json beside it, when present) from a file or folder path. */
export function loadTokenizerFromPath(p: string): TextTokenizer {
  const file = fs.existsSync(p) && fs.statSync(p).isDirectory() ? path.join(p, 'tokenizer.json') : p;
  if (!fs.existsSync(file)) throw new TokenizerLoadError(`no tokenizer at ${file}: give a tokenizer.json file or a folder holding one`);
  const configFile = path.join(path.dirname(file), 'tokenizer_config.json');
  const config = fs.existsSync(configFile) ? parseJsonFile(configFile) : {};
  return wrap(new Tokenizer(parseJsonFile(file), config));
}

async function fetchHubFile(source: Extract<TokenizerSource, { hubModel: string }>, name: string, optional: boolean): Promise<object | undefined> {
  const endpoint = (source.endpoint ?? 'https://huggingface.co').replace(/\/+$/, '');
  const url = `${endpoint}/${source.hubModel}/resolve/${encodeURIComponent(source.revision ?? 'main')}/${name}`;
  const res = await (source.fetch ?? fetch)(url, { headers: source.token ? { Authorization: `Bearer ${source.token}` } : {} }).catch((err: unknown) => {
    throw new TokenizerLoadError(`cannot fetch ${url}: ${err instanceof Error ? err.message : String(err)}`);
  });
  if (res.status === 404 && optional) return undefined;
  if (!res.ok) throw new TokenizerLoadError(`fetching ${url} answered HTTP ${res.status}${res.status === 401 ? ' (gated model: pass a Hugging Face token)' : ''}`);
  const value: unknown = await res.json().catch(() => undefined);
  if (!value || typeof value !== 'object') throw new TokenizerLoadError(`${url} is not a JSON object`);
  return value;
}

/** Loads a tokenizer from a path, or from the hub (reading and filling `cacheDir` when given). */
export async function loadHfTokenizer(source: TokenizerSource): Promise<TextTokenizer> {
  if ('path' in source) return loadTokenizerFromPath(source.path);
  const cached = source.cacheDir ? path.join(source.cacheDir, source.hubModel, source.revision ?? 'main') : undefined;
  if (cached && fs.existsSync(path.join(cached, 'tokenizer.json'))) return loadTokenizerFromPath(cached);
  const tokenizerJson = await fetchHubFile(source, 'tokenizer.json', false);
  const configJson = (await fetchHubFile(source, 'tokenizer_config.json', true)) ?? {};
  if (cached) {
    fs.mkdirSync(cached, { recursive: true });
    fs.writeFileSync(path.join(cached, 'tokenizer.json'), JSON.stringify(tokenizerJson));
    fs.writeFileSync(path.join(cached, 'tokenizer_config.json'), JSON.stringify(configJson));
  }
  return wrap(new Tokenizer(tokenizerJson!, configJson));
}
