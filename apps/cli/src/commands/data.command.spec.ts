// Spawns the real CLI (`rx data fetch gsm8k …`) on temporary folders, and against a local HTTP server that answers
// like the datasets-server rows API (no network here).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../../..');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function rx(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args],
      { cwd: ROOT, timeout: 30_000, env: { ...process.env, ...env } },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

// ASCII-only problems: Python's json.dumps line is then `{"question": <JSON>, "answer": <JSON>}`
const DATA = {
  train: [
    { question: 'Sam has 4 bags of 6 nuts. How many nuts?', answer: '4*6 = <<4*6=24>>24\n#### 24' },
    { question: 'A "fast" car goes 80 km in 1 hour. How far in 3 hours?', answer: '80*3 = <<80*3=240>>240\n#### 240' },
    { question: 'Kim had 10 cards and lost 4. How many are left?', answer: '10-4 = <<10-4=6>>6\n#### 6' },
  ],
  test: [{ question: 'What is 7 times 8?', answer: '7*8 = <<7*8=56>>56\n#### 56' }],
};
const pythonJsonl = (rows: Array<{ question: string; answer: string }>): string =>
  rows.map((r) => `{"question": ${JSON.stringify(r.question)}, "answer": ${JSON.stringify(r.answer)}}\n`).join('');

describe('rx data fetch gsm8k', () => {
  let dir: string;
  let source: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rx-data-'));
    source = path.join(dir, 'source');
    await mkdir(source);
    await writeFile(path.join(source, 'train.jsonl'), pythonJsonl(DATA.train));
    await writeFile(path.join(source, 'test.jsonl'), pythonJsonl(DATA.test));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--from copies a local folder; without --no-verify it must be the public release', async () => {
    const out = path.join(dir, 'copied');
    const [copied, refused, bad] = await Promise.all([
      rx(['data', 'fetch', 'gsm8k', '--from', source, '--out', out, '--no-verify']),
      rx(['data', 'fetch', 'gsm8k', '--from', source, '--out', path.join(dir, 'refused')]),
      rx(['data', 'fetch', 'gsm8k', '--from', path.join(dir, 'missing'), '--out', path.join(dir, 'x')]),
    ]);
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    expect(copied.stdout).toMatch(/^gsm8k in .*copied: train 3 problems, sha256 [0-9a-f]{64}; test 1 problems, sha256 [0-9a-f]{64}\n$/);
    expect(await readFile(path.join(out, 'train.jsonl'), 'utf8')).toBe(pythonJsonl(DATA.train));
    expect(await readFile(path.join(out, 'test.jsonl'), 'utf8')).toBe(pythonJsonl(DATA.test));

    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^rx: .*source: train has 3 problems, the public release has 7473; rerun with --no-verify to keep it anyway\n$/);
    await expect(readFile(path.join(dir, 'refused', 'train.jsonl'))).rejects.toThrow(/ENOENT/);

    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^rx: GSM8K folder .*missing does not exist/);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('--from a folder with a bad line names the file and line', async () => {
    const broken = path.join(dir, 'broken');
    await mkdir(broken);
    await writeFile(path.join(broken, 'train.jsonl'), pythonJsonl(DATA.train) + '{"question": "q"}\n');
    await writeFile(path.join(broken, 'test.jsonl'), pythonJsonl(DATA.test));
    const res = await rx(['data', 'fetch', 'gsm8k', '--from', broken, '--no-verify', '--out', path.join(dir, 'y')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^rx: .*broken\/train\.jsonl line 4: 'answer' must be a non-empty string\n$/);
  });

  describe('from the hub (RX_HF_DATASETS_SERVER_URL at a local rows server)', () => {
    let server: Server;
    let url: string;
    const requests: string[] = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        requests.push(req.url ?? '');
        const q = new URL(req.url ?? '/', 'http://x').searchParams;
        const rows = DATA[q.get('split') as 'train' | 'test'];
        const offset = Number(q.get('offset'));
        const page = rows.slice(offset, offset + Number(q.get('length'))).map((row, k) => ({ row_idx: offset + k, row, truncated_cells: [] }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ features: [], rows: page, num_rows_total: rows.length, num_rows_per_page: 100, partial: false }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('writes both splits in the release format; verification refuses a set that is not the release', async () => {
      const out = path.join(dir, 'hub');
      const res = await rx(['data', 'fetch', 'gsm8k', '--out', out, '--no-verify'], { RX_HF_DATASETS_SERVER_URL: url });
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      expect(await readFile(path.join(out, 'train.jsonl'), 'utf8')).toBe(pythonJsonl(DATA.train));
      expect(await readFile(path.join(out, 'test.jsonl'), 'utf8')).toBe(pythonJsonl(DATA.test));
      expect(requests.some((r) => r.includes('dataset=openai%2Fgsm8k') && r.includes('config=main') && r.includes('split=train'))).toBe(true);

      const strict = await rx(['data', 'fetch', 'gsm8k', '--out', path.join(dir, 'hub2')], { RX_HF_DATASETS_SERVER_URL: url });
      expect(strict.code).toBe(2);
      expect(strict.stderr).toMatch(/^rx: http:\/\/127\.0\.0\.1:\d+: train has 3 problems, the public release has 7473/);
    });

    it('offline or misconfigured: one clear line, exit 2', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const [offline, badUrl, usage, other] = await Promise.all([
        rx(['data', 'fetch', 'gsm8k', '--out', path.join(dir, 'z')], { RX_HF_DATASETS_SERVER_URL: `http://127.0.0.1:${port}` }),
        rx(['data', 'fetch', 'gsm8k', '--out', path.join(dir, 'z')], { RX_HF_DATASETS_SERVER_URL: 'not a url' }),
        rx(['data']),
        rx(['data', 'fetch', 'arith']),
      ]);
      expect(offline.stderr).toBe(`rx: cannot reach http://127.0.0.1:${port} (ECONNREFUSED); offline? copy a local folder with --from <dir>\n`);
      expect(badUrl.stderr).toBe('rx: RX_HF_DATASETS_SERVER_URL must be a URL\n');
      expect(usage.stderr).toMatch(/^rx: missing action; usage: rx data fetch gsm8k/);
      expect(other.stderr).toMatch(/^rx: cannot fetch 'arith': gsm8k or a tokenizer \(rx data fetch tokenizer <base model>\) is fetched \(arith is generated\)/);
      for (const r of [offline, badUrl, usage, other]) expect(r.code).toBe(2);
    });
  });
});
