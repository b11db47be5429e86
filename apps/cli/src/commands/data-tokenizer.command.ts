// rx data fetch tokenizer <base model> [--revision <commit>]
// Puts the base model's tokenizer.json (and tokenizer_config.json) into the user's cache (RX_CACHE_DIR, else
// $XDG_CACHE_HOME/rx, else ~/.cache/rx), at the revision rx pins for the model (its sha256 checked), or at --revision
// for a model rx has no pin for; every later run of that model reads that file (libs/backend tokenizer-pin.ts).
// RX_HF_ENDPOINT overrides the hub (https://huggingface.co); HF_TOKEN is sent for gated models.
import { parseArgs } from 'node:util';
import { fetchTokenizerToCache, rxCacheDir, TokenizerUnavailableError } from '@rx/backend';
import { UserError } from '../user-error';
import { argsError, shown } from './validate.command';

const USAGE = 'usage: rx data fetch tokenizer <base model> [--revision <commit>]';
const OPTIONS = { revision: { type: 'string' } } as const;

export async function runFetchTokenizer(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  const [, , model, ...extra] = parsed.positionals;
  if (!model) throw new UserError(`missing base model; ${USAGE}`);
  if (extra.length > 0) throw new UserError(`unexpected argument '${shown(extra[0])}'; ${USAGE}`);
  const cacheDir = rxCacheDir();
  try {
    const { file, pin, pinned } = await fetchTokenizerToCache(model, {
      cacheDir,
      revision: parsed.values.revision,
      endpoint: process.env.RX_HF_ENDPOINT || undefined,
      token: process.env.HF_TOKEN || undefined,
    });
    process.stdout.write(`tokenizer of ${model} in ${file}: revision ${pin.revision}, sha256 ${pin.sha256}${pinned ? " (rx's pin)" : ' (pinned in the cache; rx has no pin for this model)'}\n`);
    return 0;
  } catch (err) {
    if (err instanceof TokenizerUnavailableError) throw new UserError(shown(err.message));
    throw err;
  }
}
