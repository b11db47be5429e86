// rx data fetch gsm8k [--out DIR] [--from PATH] [--no-verify]   (rx data fetch tokenizer: data-tokenizer.command.ts)
// Puts GSM8K's train.jsonl / test.jsonl in DIR (default data/gsm8k under the repo): downloaded from the public hub
// (openai/gsm8k, main, through the datasets-server rows API; RX_HF_DATASETS_SERVER_URL overrides the server), or
// copied from a local folder with --from. Unless --no-verify, the sizes and sha256 must be the public release's.
import { copyFile, mkdir, rename } from 'node:fs/promises';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import {
  DatasetError,
  fetchGsm8kFromHub,
  GSM8K_SHA256,
  GSM8K_SIZES,
  GSM8K_SPLITS,
  HF_DATASETS_SERVER_URL,
  inspectGsm8kFolder,
  serializeGsm8kJsonl,
  sha256Hex,
  writeGsm8kFolder,
  type Gsm8kSplit,
} from '@rx/datasets';
import { z } from 'zod';
import { UserError } from '../user-error';
import { runFetchTokenizer } from './data-tokenizer.command';
import { argsError, shown } from './validate.command';

const USAGE = 'usage: rx data fetch gsm8k [--out DIR] [--from PATH] [--no-verify]';
const REPO_ROOT = path.resolve(__dirname, '../../../..');
export const DEFAULT_GSM8K_DIR = path.join(REPO_ROOT, 'data', 'gsm8k');

const envSchema = z.object({
  RX_HF_DATASETS_SERVER_URL: z.string().url('RX_HF_DATASETS_SERVER_URL must be a URL').default(HF_DATASETS_SERVER_URL),
});

interface Options {
  out: string;
  from?: string;
  verify: boolean;
}

const OPTIONS = { out: { type: 'string' }, from: { type: 'string' }, 'no-verify': { type: 'boolean' } } as const;
const parse = (argv: string[]) => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });

function parseOptions(argv: string[]): Options {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw argsError(err, USAGE, argv);
  }
  const [action, dataset, ...extra] = parsed.positionals;
  if (action !== 'fetch') throw new UserError(`${action ? `unknown action '${shown(action)}'` : 'missing action'}; ${USAGE}`);
  if (dataset !== 'gsm8k') {
    throw new UserError(`${dataset ? `cannot fetch '${shown(dataset)}'` : 'missing dataset'}: gsm8k or a tokenizer (rx data fetch tokenizer <base model>) is fetched (arith is generated); ${USAGE}`);
  }
  if (extra.length > 0) throw new UserError(`unexpected argument '${shown(extra[0])}'; ${USAGE}`);
  return { out: path.resolve(parsed.values.out ?? DEFAULT_GSM8K_DIR), from: parsed.values.from, verify: !parsed.values['no-verify'] };
}

function checkRelease(split: Gsm8kSplit, count: number, sha256: string, where: string): void {
  if (count !== GSM8K_SIZES[split]) {
    throw new UserError(`${shown(where)}: ${split} has ${count} problems, the public release has ${GSM8K_SIZES[split]}; rerun with --no-verify to keep it anyway`);
  }
  if (sha256 !== GSM8K_SHA256[split]) {
    throw new UserError(`${shown(where)}: ${split}.jsonl has sha256 ${sha256}, not the public release's ${GSM8K_SHA256[split]}; rerun with --no-verify to keep it anyway`);
  }
}

async function fromFolder(source: string, opts: Options): Promise<string[]> {
  const reports = await inspectGsm8kFolder(source);
  if (opts.verify) for (const r of reports) checkRelease(r.split, r.count, r.sha256, source);
  if (source !== opts.out) {
    await mkdir(opts.out, { recursive: true });
    for (const split of GSM8K_SPLITS) {
      const target = path.join(opts.out, `${split}.jsonl`);
      const tmp = `${target}.tmp-${process.pid}`;
      await copyFile(path.join(source, `${split}.jsonl`), tmp);
      await rename(tmp, target);
    }
  }
  return reports.map((r) => `${r.split} ${r.count} problems, sha256 ${r.sha256}${r.matchesRelease ? ' (the public release)' : ''}`);
}

async function fromHub(opts: Options): Promise<string[]> {
  const env = envSchema.safeParse(process.env);
  if (!env.success) throw new UserError(env.error.issues[0].message);
  const baseUrl = env.data.RX_HF_DATASETS_SERVER_URL;
  // progress only on a terminal: piped, stderr stays empty on success and one line on an error
  const onPage = process.stderr.isTTY
    ? (split: Gsm8kSplit, fetched: number, total: number) => process.stderr.write(`\rrx: openai/gsm8k ${split} ${fetched}/${total} rows from ${baseUrl}${fetched === total ? '\n' : ''}`)
    : undefined;
  const data = await fetchGsm8kFromHub({ baseUrl, onPage });
  const lines: string[] = [];
  for (const split of GSM8K_SPLITS) {
    const sha256 = sha256Hex(serializeGsm8kJsonl(data[split]));
    if (opts.verify) checkRelease(split, data[split].length, sha256, baseUrl);
    const release = data[split].length === GSM8K_SIZES[split] && sha256 === GSM8K_SHA256[split];
    lines.push(`${split} ${data[split].length} problems, sha256 ${sha256}${release ? ' (the public release)' : ''}`);
  }
  await writeGsm8kFolder(opts.out, data);
  return lines;
}

export async function run(argv: string[]): Promise<number> {
  const positionals = argv.filter((a) => !a.startsWith('-'));
  if (positionals[0] === 'fetch' && positionals[1] === 'tokenizer') return runFetchTokenizer(argv);
  const opts = parseOptions(argv);
  let lines: string[];
  try {
    lines = opts.from ? await fromFolder(path.resolve(opts.from), opts) : await fromHub(opts);
  } catch (err) {
    if (err instanceof DatasetError) throw new UserError(shown(err.message));
    const code = (err as NodeJS.ErrnoException).code;
    if (code && typeof (err as NodeJS.ErrnoException).path === 'string') {
      throw new UserError(`cannot write ${shown(String((err as NodeJS.ErrnoException).path))} (${code})`);
    }
    throw err;
  }
  const outDir = path.relative(process.cwd(), opts.out) || '.';
  process.stdout.write(`gsm8k in ${outDir}: ${lines.join('; ')}\n`);
  return 0;
}
