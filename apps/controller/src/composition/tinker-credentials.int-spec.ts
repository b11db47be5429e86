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
import { freePort } from '@rx/local-stack';
import { REPO_ROOT } from '../infra/repo-root';
import { checkTinkerCredentials } from './tinker-credentials';

jest.setTimeout(60_000);

const KEY = 'tml-right-key';
let server: Server;
let url: string;
let work: string;
const seen: Array<{ path: string; key: string | undefined }> = [];
/** what the service answers to get_server_capabilities (the spec's model, rx-embedded/char-lm, at rank <= 64) */
let served: Array<Record<string, unknown>> = [];
const SERVES_SPEC_MODEL = [{ model_name: 'Qwen/Qwen3-8B' }, { model_name: 'rx-embedded/char-lm', max_context_length: 4096, max_lora_rank: 64 }];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'rx-tinker-creds-'));
  server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', key: req.headers['x-api-key'] as string | undefined });
    const ok = req.headers['x-api-key'] === KEY;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    if (!ok) res.end('{"detail": "invalid api key"}');
    else if (req.url === '/api/v1/get_server_capabilities') res.end(JSON.stringify({ supported_models: served }));
    else res.end('{"pjwt_auth_enabled": false}');
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
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the Tinker key and URL, checked before anything is written', () => {
  beforeEach(() => {
    served = SERVES_SPEC_MODEL;
  });

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

describe('the base model, checked against get_server_capabilities before anything is written', () => {
  it('asks client/config, then get_server_capabilities; a served model at an allowed rank passes', async () => {
    served = SERVES_SPEC_MODEL;
    seen.length = 0;
    await expect(checkTinkerCredentials({ apiKey: KEY, baseUrl: url }, { baseModel: 'rx-embedded/char-lm', rank: 8 })).resolves.toBeUndefined();
    expect(seen.map((s) => s.path)).toEqual(['/api/v1/client/config', '/api/v1/get_server_capabilities']);
    await expect(checkTinkerCredentials({ apiKey: KEY, baseUrl: url }, { baseModel: 'rx-embedded/char-lm', rank: 128 })).rejects.toThrow(
      /^lora_rank 128 is above the largest rank http:\/\/127\.0\.0\.1:\d+ allows for 'rx-embedded\/char-lm' \(64\)/,
    );
  });

  it.each<[string, Array<Record<string, unknown>>, RegExp]>([
    ['a model the service does not serve', [{ model_name: 'Qwen/Qwen3-8B' }, { model_name: 'Qwen/Qwen3.5-4B' }], /^rx: base model 'rx-embedded\/char-lm' is not served by http:\/\/127\.0\.0\.1:\d+; it serves: Qwen\/Qwen3-8B, Qwen\/Qwen3\.5-4B: choose a served base_model/],
    ['an empty capability list', [], /^rx: base model 'rx-embedded\/char-lm' is not served by .*; it serves: none/],
    ['a rank above the served one', [{ model_name: 'rx-embedded/char-lm', max_lora_rank: 2 }], /^rx: lora_rank \d+ is above the largest rank .* allows for 'rx-embedded\/char-lm' \(2\)/],
  ])('%s: one line naming the model and the served ones, exit 2 in under 5 s, --out not created', async (_name, list, message) => {
    served = list;
    const out = path.join(work, 'unserved');
    const started = Date.now();
    const r = await rxRun({ TINKER_API_KEY: KEY, TINKER_BASE_URL: url }, out);
    const seconds = (Date.now() - started) / 1000;
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
    // the process's own start-up (ts-node register) included: the check itself is two loopback calls
    expect(seconds).toBeLessThan(5);
  });
});
