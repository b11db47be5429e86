// rx run on a Hugging Face base model (specs/gs1-vs-grpo.json, Qwen/Qwen3.5-2B) checks its tokenizer before anything
// is written and before any network: with nothing in the cache and no RX_TOKENIZER_PATH, one line naming the command
// that fetches it, exit 2, --out not created. With RX_TOKENIZER_PATH the check passes and the next one speaks (here the
// Tinker service, at a URL where nothing answers: offline). The real CLI in a child process.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '@rx/local-stack';

jest.setTimeout(120_000);

function rx(args: string[], env: Record<string, string>): { status: number | null; lines: string[] } {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TINKER_|RX_|REDIS_URL$)/.test(k)));
  const offline = { TINKER_API_KEY: 'tml-offline-key', TINKER_BASE_URL: 'http://127.0.0.1:9' };
  const r = spawnSync(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', ...args], { cwd: REPO_ROOT, env: { ...clean, ...offline, ...env }, encoding: 'utf8', timeout: 100_000 });
  return { status: r.status, lines: `${r.stdout}${r.stderr}`.trim().split('\n') };
}

describe('rx run: the tokenizer before anything is written', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-cli-tok-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('nothing cached, no RX_TOKENIZER_PATH: one line naming rx data fetch tokenizer, exit 2, --out not created', () => {
    const out = path.join(work, 'run');
    const r = rx(['run', '--spec', 'specs/gs1-vs-grpo.json', '--out', out], { RX_CACHE_DIR: path.join(work, 'empty-cache') });
    expect(r.lines).toEqual([expect.stringMatching(/^rx: no tokenizer for Qwen\/Qwen3\.5-2B in .*empty-cache: run `rx data fetch tokenizer Qwen\/Qwen3\.5-2B( --revision <commit>)?` \(or set RX_TOKENIZER_PATH to a tokenizer\.json\); nothing was written$/)]);
    expect(r.status).toBe(2);
    expect(existsSync(out)).toBe(false);
  });

  it('(control) with RX_TOKENIZER_PATH the tokenizer check passes and the next check answers', () => {
    const out = path.join(work, 'run2');
    const fixture = path.join(REPO_ROOT, 'libs', 'backend', 'testing', 'fixtures', 'tiny-qwen-tokenizer.json');
    const r = rx(['run', '--spec', 'specs/gs1-vs-grpo.json', '--out', out], { RX_CACHE_DIR: path.join(work, 'empty-cache'), RX_TOKENIZER_PATH: fixture });
    expect(r.lines).toEqual([expect.stringMatching(/^rx: TINKER_BASE_URL http:\/\/127\.0\.0\.1:9 did not answer .*\(nothing was written\)$/)]);
    expect(r.status).toBe(2);
    expect(existsSync(out)).toBe(false);
  });
});
