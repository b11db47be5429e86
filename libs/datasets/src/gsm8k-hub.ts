// GSM8K from the public dataset hub through the Hugging Face datasets-server rows API:
//   GET {base}/rows?dataset=openai%2Fgsm8k&config=main&split=<train|test>&offset=<o>&length=<≤100>
//   -> {"rows":[{"row_idx":0,"row":{"question":…,"answer":…},"truncated_cells":[]}],"num_rows_total":7473,…}
// Pages are fetched a few at a time, retried with back-off on 429/5xx/timeouts/connection loss (not on an unknown
// host or a refused connection), and placed by row_idx.
import { z } from 'zod';
import { DatasetError, gsm8kProblemFrom, type Gsm8k, type Gsm8kSplit, GSM8K_SPLITS } from './gsm8k';
import type { Problem } from './problem';

export const HF_DATASETS_SERVER_URL = 'https://datasets-server.huggingface.co';
export const GSM8K_HUB_DATASET = 'openai/gsm8k';
export const GSM8K_HUB_CONFIG = 'main';
/** the rows API serves at most 100 rows a request */
export const MAX_PAGE_SIZE = 100;

export interface HubFetchOptions {
  /** datasets-server base URL (default https://datasets-server.huggingface.co) */
  baseUrl?: string;
  /** rows per request, 1..100 (default 100) */
  pageSize?: number;
  /** requests in flight at once (default 4) */
  concurrency?: number;
  /** attempts per request, the first included (default 5) */
  attempts?: number;
  /** first back-off in ms, doubled each retry (default 500; Retry-After wins when the server sends it) */
  backoffMs?: number;
  /** per-request timeout in ms (default 30000) */
  timeoutMs?: number;
  onPage?: (split: Gsm8kSplit, fetched: number, total: number) => void;
}

const pageSchema = z.object({
  rows: z.array(
    z.object({
      row_idx: z.number().int().nonnegative(),
      row: z.record(z.unknown()),
      truncated_cells: z.array(z.string()).optional(),
    }),
  ),
  num_rows_total: z.number().int().nonnegative(),
  partial: z.boolean().optional(),
});
type Page = z.infer<typeof pageSchema>;

class RetryableError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

const UNREACHABLE = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED']);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// a network failure's code (ECONNREFUSED, ENOTFOUND, …) from undici's `fetch failed` cause chain
function networkCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 60_000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.min(Math.max(0, date - Date.now()), 60_000);
}

async function getPageOnce(url: string, timeoutMs: number): Promise<Page> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new RetryableError(`GET ${url}: no answer within ${timeoutMs} ms`);
    const code = networkCode(err);
    const message = `cannot reach ${new URL(url).origin}${code ? ` (${code})` : ''}`;
    // no such host / nothing listening: not transient, so no retries (an offline machine fails at once)
    if (code && UNREACHABLE.has(code)) throw new DatasetError(`${message}; offline? copy a local folder with --from <dir>`);
    throw new RetryableError(message);
  }
  let body: string;
  try {
    body = await res.text();
  } catch (err) {
    const code = networkCode(err);
    throw new RetryableError(`GET ${url}: connection lost while reading the answer${code ? ` (${code})` : ''}`);
  }
  if (res.status === 429 || res.status >= 500) {
    throw new RetryableError(`GET ${url}: HTTP ${res.status} ${snippet(body)}`, retryAfterMs(res.headers.get('retry-after')));
  }
  if (!res.ok) throw new DatasetError(`GET ${url}: HTTP ${res.status} ${snippet(body)}`);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new DatasetError(`GET ${url}: the answer is not JSON (${snippet(body)})`);
  }
  const parsed = pageSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DatasetError(`GET ${url}: unexpected answer shape at '${issue.path.join('.')}': ${issue.message}`);
  }
  return parsed.data;
}

function snippet(body: string): string {
  const oneLine = body.replace(/\s+/g, ' ').trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
}

async function getPage(url: string, opts: Required<Pick<HubFetchOptions, 'attempts' | 'backoffMs' | 'timeoutMs'>>): Promise<Page> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await getPageOnce(url, opts.timeoutMs);
    } catch (err) {
      if (!(err instanceof RetryableError)) throw err;
      if (attempt >= opts.attempts) {
        throw new DatasetError(`${err.message}; gave up after ${attempt} attempts (offline? copy a local folder with --from <dir>)`);
      }
      await sleep(err.retryAfterMs ?? opts.backoffMs * 2 ** (attempt - 1));
    }
  }
}

function rowsUrl(base: string, split: Gsm8kSplit, offset: number, length: number): string {
  const url = new URL('rows', base.endsWith('/') ? base : `${base}/`);
  url.searchParams.set('dataset', GSM8K_HUB_DATASET);
  url.searchParams.set('config', GSM8K_HUB_CONFIG);
  url.searchParams.set('split', split);
  url.searchParams.set('offset', String(offset));
  url.searchParams.set('length', String(length));
  return url.toString();
}

/** One split of openai/gsm8k (main) from the hub, in the dataset's row order. */
export async function fetchGsm8kSplitFromHub(split: Gsm8kSplit, options: HubFetchOptions = {}): Promise<Problem[]> {
  const base = options.baseUrl ?? HF_DATASETS_SERVER_URL;
  const pageSize = options.pageSize ?? MAX_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new RangeError(`pageSize must be an integer in 1..${MAX_PAGE_SIZE}, got ${pageSize}`);
  }
  const retry = { attempts: options.attempts ?? 5, backoffMs: options.backoffMs ?? 500, timeoutMs: options.timeoutMs ?? 30_000 };
  const concurrency = Math.max(1, options.concurrency ?? 4);

  const first = await getPage(rowsUrl(base, split, 0, pageSize), retry);
  const total = first.num_rows_total;
  if (total === 0) throw new DatasetError(`${GSM8K_HUB_DATASET} ${split}: the hub reports no rows`);
  const rows = new Array<Problem | undefined>(total);
  let fetched = 0;

  const place = (page: Page, offset: number, length: number): void => {
    if (page.partial) throw new DatasetError(`${GSM8K_HUB_DATASET} ${split}: the hub served a partial split`);
    if (page.num_rows_total !== total) {
      throw new DatasetError(`${GSM8K_HUB_DATASET} ${split}: the row count changed during the download (${total} -> ${page.num_rows_total})`);
    }
    if (page.rows.length !== length) {
      throw new DatasetError(`${GSM8K_HUB_DATASET} ${split}: rows ${offset}..${offset + length - 1} came back with ${page.rows.length} rows`);
    }
    for (const { row_idx, row, truncated_cells } of page.rows) {
      if (row_idx < offset || row_idx >= offset + length) {
        throw new DatasetError(`${GSM8K_HUB_DATASET} ${split}: row ${row_idx} outside the requested ${offset}..${offset + length - 1}`);
      }
      if (truncated_cells && truncated_cells.length > 0) {
        throw new DatasetError(`${GSM8K_HUB_DATASET} ${split} row ${row_idx}: the hub truncated ${truncated_cells.join(', ')}`);
      }
      const problem = gsm8kProblemFrom(row, split, row_idx);
      if (typeof problem === 'string') throw new DatasetError(`${GSM8K_HUB_DATASET} ${split} row ${row_idx}: ${problem}`);
      if (rows[row_idx]) throw new DatasetError(`${GSM8K_HUB_DATASET} ${split}: row ${row_idx} served twice`);
      rows[row_idx] = problem;
    }
    fetched += length;
    options.onPage?.(split, fetched, total);
  };

  place(first, 0, Math.min(pageSize, total));
  const offsets: number[] = [];
  for (let offset = pageSize; offset < total; offset += pageSize) offsets.push(offset);
  let cursor = 0;
  const worker = async (): Promise<void> => {
    while (cursor < offsets.length) {
      const offset = offsets[cursor++];
      const length = Math.min(pageSize, total - offset);
      place(await getPage(rowsUrl(base, split, offset, length), retry), offset, length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, offsets.length) }, worker));

  const missing = rows.findIndex((p) => p === undefined);
  if (missing >= 0) throw new DatasetError(`${GSM8K_HUB_DATASET} ${split}: row ${missing} was never served`);
  return rows as Problem[];
}

/** Both splits of openai/gsm8k (main) from the hub. */
export async function fetchGsm8kFromHub(options: HubFetchOptions = {}): Promise<Gsm8k> {
  const out: Partial<Gsm8k> = {};
  for (const split of GSM8K_SPLITS) out[split] = await fetchGsm8kSplitFromHub(split, options);
  return out as Gsm8k;
}
