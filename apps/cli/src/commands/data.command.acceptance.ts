// `rx data fetch gsm8k --from ../shared/data/gsm8k` verifies the shipped copy against the public release and copies it.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';

const ROOT = path.resolve(__dirname, '../../../..');
const SHARED = process.env.RX_SHARED_DIR ?? path.resolve(ROOT, '..', 'shared');

it('rx data fetch gsm8k --from the shared folder: verified and copied byte for byte', async () => {
  const out = await mkdtemp(path.join(tmpdir(), 'rx-data-acc-'));
  try {
    const from = path.join(SHARED, 'data', 'gsm8k');
    const res = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', 'data', 'fetch', 'gsm8k', '--from', from, '--out', out], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/train 7473 problems, sha256 17f347dc\w+ \(the public release\); test 1319 problems, sha256 3730d312\w+ \(the public release\)/);
    for (const split of ['train', 'test']) {
      const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      expect(digest(await readFile(path.join(out, `${split}.jsonl`)))).toBe(digest(await readFile(path.join(from, `${split}.jsonl`))));
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});
