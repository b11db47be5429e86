// rx run --backend tinker checks its key and URL before the run directory is written: one authenticated call
// (client/config) to a real loopback server that knows one key, and the CLI as a real child process. A wrong key, a
// key that cannot be an HTTP header, a URL that is not http(s) or does not answer: one line naming the variable,
// exit 2, nothing written (before: a final `stopped` run, or an `interrupted` one that resuming could not mend).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { freePort } from '../infra/free-port';
import { REPO_ROOT } from '../infra/repo-root';
import { checkTinkerCredentials } from './tinker-credentials';

jest.setTimeout(60_000);

const KEY = 'tml-right-key';
let server: Server;
let url: string;
let work: string;
const seen: Array<{ path: string; key: string | undefined }> = [];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'rx-tinker-creds-'));
  server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', key: req.headers['x-api-key'] as string | undefined });
    const ok = req.headers['x-api-key'] === KEY;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(ok ? '{"pjwt_auth_enabled": false}' : '{"detail": "invalid api key"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(work, { recursive: true, force: true });
});

function rxRun(env: Record<string, string>, out: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/cli/src/main.ts', 'run', '--spec', 'specs/embedded.json', '--backend', 'tinker', '--out', out, '--port', 'off'], {
      cwd: REPO_ROOT,
      env: { ...process.env, TINKER_API_KEY: '', TINKER_BASE_URL: '', RX_BACKEND_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the Tinker key and URL, checked before anything is written', () => {
  it('one authenticated call: the right key passes, a wrong one is refused naming TINKER_API_KEY', async () => {
    seen.length = 0;
    await expect(checkTinkerCredentials({ apiKey: KEY, baseUrl: url })).resolves.toBeUndefined();
    await expect(checkTinkerCredentials({ apiKey: 'tml-wrong', baseUrl: url })).rejects.toThrow(/^TINKER_API_KEY was refused by http:\/\/127\.0\.0\.1:\d+ \(HTTP 401\)/);
    expect(seen).toEqual([
      { path: '/api/v1/client/config', key: KEY },
      { path: '/api/v1/client/config', key: 'tml-wrong' },
    ]);
  });

  it.each<[string, () => Promise<Record<string, string>>, RegExp]>([
    ['a wrong key', async () => ({ TINKER_API_KEY: 'tml-wrong', TINKER_BASE_URL: url }), /^rx: TINKER_API_KEY was refused by .*\(HTTP 401\)/],
    ['a key that is not Latin-1', async () => ({ TINKER_API_KEY: 'tml-ключ', TINKER_BASE_URL: url }), /^rx: controller: invalid environment: TINKER_API_KEY must be printable Latin-1/],
    ['a base URL that is not http(s)', async () => ({ TINKER_API_KEY: KEY, TINKER_BASE_URL: 'ftp://127.0.0.1/tinker' }), /^rx: controller: invalid environment: TINKER_BASE_URL must be an http\(s\) URL/],
    ['a base URL nobody answers', async () => ({ TINKER_API_KEY: KEY, TINKER_BASE_URL: `http://127.0.0.1:${await freePort()}` }), /^rx: TINKER_BASE_URL http:\/\/127\.0\.0\.1:\d+ did not answer/],
  ])('%s: one line naming the variable, exit 2, no run directory', async (_name, env, message) => {
    const out = path.join(work, 'run');
    const r = await rxRun(await env(), out);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toContain('tml-');
    expect(existsSync(out)).toBe(false);
  });
});
