// The HTTP client's close() against a real loopback server, in a child process (Jest's sandbox hides Node's process
// warnings): many calls in flight (the controller keeps RX_CONCURRENCY of them) are each aborted by one close, and
// no MaxListenersExceededWarning is printed on the way (it was one abort listener per call on one signal: a warning
// past ten on every run).
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

const SCRIPT = `
const { createServer } = require('node:http');
const { TinkerHttp } = require('./libs/backend/src/tinker/tinker-http');
const { TinkerClosedError } = require('./libs/backend/src/tinker/tinker-errors');
const server = createServer(() => undefined); // answers nothing
server.listen(0, '127.0.0.1', async () => {
  const http = new TinkerHttp({ baseUrl: 'http://127.0.0.1:' + server.address().port, apiKey: 'k', timeoutMs: 30000, retry: { retries: 0, baseDelayMs: 10, maxDelayMs: 10 }, userAgent: 'rx-test' });
  const calls = Array.from({ length: 64 }, () => http.request({ method: 'GET', path: '/api/v1/healthz', retries: 0 }).then(() => 'answered', (e) => e));
  await new Promise((r) => setTimeout(r, 300));
  http.close();
  const results = await Promise.all(calls);
  process.stdout.write('closed ' + results.filter((e) => e instanceof TinkerClosedError).length + '\\n');
  server.closeAllConnections();
  server.close();
});
`;

describe('TinkerHttp with many calls in flight', () => {
  it('aborts every one on close, with no listener warning', () => {
    const r = spawnSync(process.execPath, ['-r', './tools/register.js', '-e', SCRIPT], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(r.stdout).toBe('closed 64\n');
    expect(r.stderr).not.toMatch(/MaxListenersExceededWarning/);
    expect(r.status).toBe(0);
  });
});
