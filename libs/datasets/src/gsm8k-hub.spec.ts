// The hub client against a local HTTP server that answers like datasets-server (no network here).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchGsm8kFromHub, fetchGsm8kSplitFromHub } from './gsm8k-hub';
import { startRowsServer, TINY_GSM8K, type RowsServer } from './gsm8k.fixture';

const FAST = { backoffMs: 5, timeoutMs: 2000 };

describe('fetchGsm8kFromHub (datasets-server rows API)', () => {
  let server: RowsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('pages through both splits and returns the problems in row order', async () => {
    server = await startRowsServer({ data: TINY_GSM8K });
    const pages: string[] = [];
    const data = await fetchGsm8kFromHub({ baseUrl: server.url, pageSize: 3, concurrency: 2, ...FAST, onPage: (s, n, t) => pages.push(`${s} ${n}/${t}`) });
    expect(data.train.map((p) => p.question)).toEqual(TINY_GSM8K.train.map((r) => r.question));
    expect(data.test.map((p) => p.answer)).toEqual(TINY_GSM8K.test.map((r) => r.answer));
    expect(data.train[6].id).toBe('gsm8k-train-6');
    expect(data.test[0].id).toBe('gsm8k-test-0');
    // 7 train rows in pages of 3 (offsets 0, 3, 6; the last asks for 1), 3 test rows in one page
    const asked = server.requests.map((r) => new URL(r, 'http://x').searchParams);
    expect(asked.map((q) => `${q.get('split')}:${q.get('offset')}+${q.get('length')}`).sort()).toEqual(['test:0+3', 'train:0+3', 'train:3+3', 'train:6+1']);
    expect(asked.every((q) => q.get('dataset') === 'openai/gsm8k' && q.get('config') === 'main')).toBe(true);
    expect(pages[pages.length - 1]).toBe('test 3/3');
  });

  it('retries 503 and 429 (honouring Retry-After) and a dropped connection, then succeeds', async () => {
    const faults = new Map<number, '503' | '429' | 'drop'>([[1, '503'], [2, '429'], [4, 'drop']]);
    server = await startRowsServer({
      data: TINY_GSM8K,
      fault: (_req, res, n) => {
        const f = faults.get(n);
        if (f === '503') res.writeHead(503).end('upstream busy');
        else if (f === '429') res.writeHead(429, { 'retry-after': '0' }).end('slow down');
        else if (f === 'drop') res.socket?.destroy();
        return f !== undefined;
      },
    });
    const train = await fetchGsm8kSplitFromHub('train', { baseUrl: server.url, pageSize: 3, concurrency: 1, ...FAST });
    expect(train).toHaveLength(7);
    expect(server.requests).toHaveLength(3 + 3);
  });

  it('times out a silent server and gives up with a clear message after the attempts', async () => {
    const silent = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      await expect(fetchGsm8kSplitFromHub('test', { baseUrl: url, attempts: 2, backoffMs: 1, timeoutMs: 150 })).rejects.toThrow(
        /no answer within 150 ms; gave up after 2 attempts \(offline\? copy a local folder with --from <dir>\)/,
      );
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('says at once, without retrying, that it cannot reach a server where nothing listens', async () => {
    const probe = await startRowsServer({ data: TINY_GSM8K });
    const url = probe.url;
    await probe.close(); // the port is now closed
    const started = Date.now();
    await expect(fetchGsm8kSplitFromHub('test', { baseUrl: url, attempts: 5, backoffMs: 1000 })).rejects.toThrow(
      new RegExp(`^cannot reach ${url.replace(/[.]/g, '\\.')} \\(ECONNREFUSED\\); offline\\? copy a local folder with --from <dir>$`),
    );
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('does not retry a 404 and names what the server answered', async () => {
    server = await startRowsServer({ data: TINY_GSM8K, fault: (_q, res) => (res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not Found"}'), true) });
    await expect(fetchGsm8kSplitFromHub('train', { baseUrl: server.url, ...FAST })).rejects.toThrow(/HTTP 404 \{"error":"Not Found"\}$/);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses answers of the wrong shape, truncated cells, bad rows and short pages', async () => {
    const cases: Array<[(body: Record<string, unknown>) => unknown, RegExp]> = [
      [() => 'not json', /the answer is not JSON/],
      [(b) => ({ ...b, rows: 'x' }), /unexpected answer shape at 'rows'/],
      [(b) => ({ ...b, rows: (b.rows as unknown[]).map((r) => ({ ...(r as object), truncated_cells: ['answer'] })) }), /row 0: the hub truncated answer/],
      [(b) => ({ ...b, num_rows_total: 1, rows: [{ row_idx: 0, row: { question: 'q', answer: 'no hashes' }, truncated_cells: [] }] }), /test row 0: 'answer' has no '####/],
      [(b) => ({ ...b, rows: (b.rows as unknown[]).slice(1) }), /rows 0\.\.2 came back with 2 rows/],
    ];
    for (const [mangle, message] of cases) {
      const body = {
        rows: TINY_GSM8K.test.map((row, k) => ({ row_idx: k, row, truncated_cells: [] })),
        num_rows_total: 3,
        partial: false,
      };
      server = await startRowsServer({
        data: TINY_GSM8K,
        fault: (_q, res) => {
          const m = mangle(body);
          res.writeHead(200, { 'content-type': 'application/json' }).end(typeof m === 'string' ? m : JSON.stringify(m));
          return true;
        },
      });
      await expect(fetchGsm8kSplitFromHub('test', { baseUrl: server.url, ...FAST })).rejects.toThrow(message);
      await server.close();
      server = undefined;
    }
  });
});
