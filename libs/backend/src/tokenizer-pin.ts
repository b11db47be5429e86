// One pinned tokenizer per run. For a Hugging Face base model the run's tokenizer.json is one file, fixed by its
// sha256 before anything is written, and every process of the run (the controller and the services it starts)
// reads that same file (RX_TOKENIZER_PATH). Where it comes from, in order:
//   1. RX_TOKENIZER_PATH: the user's file (a tokenizer.json, or a folder holding one), taken as it is; its sha256 is
//      recorded, with whether it is the pinned file;
//   2. the cache in the user's cache directory (RX_CACHE_DIR, else $XDG_CACHE_HOME/rx, else ~/.cache/rx):
//      tokenizers/<model>/<revision>/tokenizer.json, put there by `rx data fetch tokenizer <model>` at the revision
//      pinned in TOKENIZER_PINS (the file's sha256 checked against the pin), or at `--revision` for a model rx has no
//      pin for (the cache's pin.json then holds what was fetched, and every later run checks the file against it).
// Nothing is fetched at run time: offline with nothing cached is one line naming the command.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHAR_BASE_MODELS } from './renderer-registry';

export interface TokenizerPin {
  /** the model repository on the hub */
  hubModel: string;
  /** a commit of that repository (never a branch name) */
  revision: string;
  /** sha256 of tokenizer.json at that commit, as served by the hub (the raw bytes) */
  sha256: string;
}

/**
 * The pinned tokenizer of each base model rx runs. Empty for now: no pin can be taken from this environment (the
 * hub is not reachable), and a pin is only what was measured. Add one per base model as
 * `'Qwen/Qwen3.5-2B': { hubModel: 'Qwen/Qwen3.5-2B', revision: '<40-hex commit>', sha256: '<64 hex>' }`, the values
 * printed by `rx data fetch tokenizer Qwen/Qwen3.5-2B --revision <commit>`. Until then that command's pin.json in the
 * user's cache fixes the file for every run on that machine.
 */
export const TOKENIZER_PINS: Readonly<Record<string, TokenizerPin>> = {};

/** What a run records about its tokenizer (effective-config.json, hence record.json). */
export interface RunTokenizer {
  /** the file every process of the run reads */
  path: string;
  sha256: string;
  source: 'RX_TOKENIZER_PATH' | 'cache';
  /** the hub commit the file came from, when known */
  revision: string | null;
  /** the repository's pin, when rx has one for the model */
  pin: TokenizerPin | null;
  /** true when the file is the pinned one (sha256 equal), null when there is no pin */
  matches_pin: boolean | null;
}

/** No tokenizer for the run (nothing cached and no override, or a file that is not what its pin says): one line. */
export class TokenizerUnavailableError extends Error {
  override readonly name = 'TokenizerUnavailableError';
}

/** The user's cache directory for rx: RX_CACHE_DIR, else $XDG_CACHE_HOME/rx, else ~/.cache/rx. */
export function rxCacheDir(env: Record<string, string | undefined> = process.env): string {
  if (env.RX_CACHE_DIR) return path.resolve(env.RX_CACHE_DIR);
  return path.join(env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(os.homedir(), '.cache'), 'rx');
}

export function sha256File(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** tokenizers/<model>/<revision> under the cache directory (the model's '/' kept as a folder) */
export function tokenizerCacheDir(cacheDir: string, hubModel: string, revision: string): string {
  return path.join(cacheDir, 'tokenizers', ...hubModel.split('/'), revision);
}

/** the command that fills the cache for `baseModel` */
export function fetchTokenizerCommand(baseModel: string, pins: Readonly<Record<string, TokenizerPin>> = TOKENIZER_PINS): string {
  return pins[baseModel] ? `rx data fetch tokenizer ${baseModel}` : `rx data fetch tokenizer ${baseModel} --revision <commit>`;
}

const cachedPinSchema = (value: unknown): TokenizerPin | null => {
  const v = value as Partial<TokenizerPin> | null;
  return v && typeof v.hubModel === 'string' && typeof v.revision === 'string' && typeof v.sha256 === 'string' && /^[0-9a-f]{64}$/.test(v.sha256) ? { hubModel: v.hubModel, revision: v.revision, sha256: v.sha256 } : null;
};

/** The pins in the cache for `baseModel` (what `rx data fetch tokenizer` wrote), newest first. */
function cachedPins(cacheDir: string, baseModel: string): Array<{ pin: TokenizerPin; dir: string }> {
  const modelDir = path.join(cacheDir, 'tokenizers', ...baseModel.split('/'));
  if (!fs.existsSync(modelDir)) return [];
  const found: Array<{ pin: TokenizerPin; dir: string; at: number }> = [];
  for (const revision of fs.readdirSync(modelDir)) {
    const dir = path.join(modelDir, revision);
    const pinFile = path.join(dir, 'pin.json');
    if (!fs.existsSync(pinFile)) continue;
    let pin: TokenizerPin | null = null;
    try {
      pin = cachedPinSchema(JSON.parse(fs.readFileSync(pinFile, 'utf8')));
    } catch {
      pin = null;
    }
    if (pin && pin.revision === revision) found.push({ pin, dir, at: fs.statSync(pinFile).mtimeMs });
  }
  return found.sort((a, b) => b.at - a.at);
}

/**
 * The run's tokenizer for `baseModel`, or null for a model rx renders without one (the embedded character model).
 * Reads files only; throws TokenizerUnavailableError with one line when there is none to use.
 */
export function resolveRunTokenizer(
  baseModel: string,
  env: Record<string, string | undefined> = process.env,
  pins: Readonly<Record<string, TokenizerPin>> = TOKENIZER_PINS,
): RunTokenizer | null {
  if (CHAR_BASE_MODELS.includes(baseModel)) return null;
  const pin = pins[baseModel] ?? null;
  const override = env.RX_TOKENIZER_PATH?.trim();
  if (override) {
    const given = path.resolve(override);
    const file = fs.existsSync(given) && fs.statSync(given).isDirectory() ? path.join(given, 'tokenizer.json') : given;
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new TokenizerUnavailableError(`RX_TOKENIZER_PATH: no tokenizer.json at ${file}`);
    const sha256 = sha256File(file);
    return { path: file, sha256, source: 'RX_TOKENIZER_PATH', revision: null, pin, matches_pin: pin ? pin.sha256 === sha256 : null };
  }
  const cacheDir = rxCacheDir(env);
  const candidates = pin ? [{ pin, dir: tokenizerCacheDir(cacheDir, pin.hubModel, pin.revision) }] : cachedPins(cacheDir, baseModel);
  const chosen = candidates.find((c) => fs.existsSync(path.join(c.dir, 'tokenizer.json')));
  if (!chosen) {
    throw new TokenizerUnavailableError(
      `no tokenizer for ${baseModel} in ${cacheDir}${pin ? ` (pinned revision ${pin.revision})` : ''}: run \`${fetchTokenizerCommand(baseModel, pins)}\` (or set RX_TOKENIZER_PATH to a tokenizer.json); nothing was written`,
    );
  }
  const file = path.join(chosen.dir, 'tokenizer.json');
  const sha256 = sha256File(file);
  if (sha256 !== chosen.pin.sha256) {
    throw new TokenizerUnavailableError(`${file} has sha256 ${sha256}, not the pinned ${chosen.pin.sha256} (revision ${chosen.pin.revision}): remove it and run \`${fetchTokenizerCommand(baseModel, pins)}\` again; nothing was written`);
  }
  return { path: file, sha256, source: 'cache', revision: chosen.pin.revision, pin, matches_pin: pin ? true : null };
}

/**
 * Fetches `baseModel`'s tokenizer.json (and tokenizer_config.json when the hub has one) at the pinned revision, or
 * at `revision` for a model without a pin, into the cache; the raw bytes are kept and, under a pin, must have its
 * sha256. Returns the cached file and its pin (pin.json beside it).
 */
export async function fetchTokenizerToCache(
  baseModel: string,
  opts: { cacheDir: string; revision?: string; endpoint?: string; token?: string; fetch?: typeof fetch; pins?: Readonly<Record<string, TokenizerPin>> },
): Promise<{ file: string; pin: TokenizerPin; pinned: boolean }> {
  const repoPin = (opts.pins ?? TOKENIZER_PINS)[baseModel];
  if (repoPin && opts.revision && opts.revision !== repoPin.revision) {
    throw new TokenizerUnavailableError(`${baseModel} is pinned to revision ${repoPin.revision}; --revision ${opts.revision} is refused (set RX_TOKENIZER_PATH to use another file)`);
  }
  const revision = repoPin?.revision ?? opts.revision;
  if (!revision) throw new TokenizerUnavailableError(`rx has no pinned tokenizer for ${baseModel}: give the hub commit to pin with --revision <commit>`);
  if (!/^[0-9a-f]{40}$/.test(revision)) throw new TokenizerUnavailableError(`--revision must be a 40-hex commit of the model repository (got '${revision}'): a branch moves, a pin does not`);
  const hubModel = repoPin?.hubModel ?? baseModel;
  const endpoint = (opts.endpoint ?? 'https://huggingface.co').replace(/\/+$/, '');
  const get = async (name: string, optional: boolean): Promise<Buffer | null> => {
    const url = `${endpoint}/${hubModel}/resolve/${revision}/${name}`;
    const res = await (opts.fetch ?? fetch)(url, { headers: opts.token ? { Authorization: `Bearer ${opts.token}` } : {} }).catch((err: unknown) => {
      throw new TokenizerUnavailableError(`cannot fetch ${url}: ${err instanceof Error ? err.message : String(err)}`);
    });
    if (res.status === 404 && optional) return null;
    if (!res.ok) throw new TokenizerUnavailableError(`fetching ${url} answered HTTP ${res.status}${res.status === 401 ? ' (a gated model: set HF_TOKEN)' : ''}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const bytes = (await get('tokenizer.json', false))!;
  try {
    JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new TokenizerUnavailableError(`${hubModel}@${revision} tokenizer.json is not JSON`);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (repoPin && sha256 !== repoPin.sha256) throw new TokenizerUnavailableError(`${hubModel}@${revision} tokenizer.json has sha256 ${sha256}, not the pinned ${repoPin.sha256}; nothing was cached`);
  const config = await get('tokenizer_config.json', true);
  const dir = tokenizerCacheDir(opts.cacheDir, baseModel, revision);
  fs.mkdirSync(dir, { recursive: true });
  const write = (name: string, data: Buffer | string): void => {
    const tmp = path.join(dir, `.${name}.tmp-${process.pid}`);
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, path.join(dir, name));
  };
  if (config) write('tokenizer_config.json', config);
  write('tokenizer.json', bytes);
  const pin: TokenizerPin = { hubModel, revision, sha256 };
  write('pin.json', `${JSON.stringify({ ...pin, fetched_at: new Date().toISOString(), pinned_in_rx: !!repoPin }, null, 2)}\n`);
  return { file: path.join(dir, 'tokenizer.json'), pin, pinned: !!repoPin };
}
