// The policy-server process (its code, over the in-memory test model: testing/memory.main.ts): one clear line and
// exit 2 on bad configuration; serves, then closes on SIGTERM.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const MAIN = 'apps/policy-server/testing/memory.main.ts';

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['-r', './tools/register.js', MAIN], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

describe('policy-server main', () => {
  jest.setTimeout(30_000);

  it('prints one line and exits 2 on a bad variable', async () => {
    const p = start({ PORT: 'x' });
    expect(await p.exited).toBe(2);
    expect(p.err()).toBe('policy-server: policy-server configuration: PORT must be an integer >= 0\n');
  });

  it('serves on the port it prints and closes gracefully on SIGTERM', async () => {
    const p = start({ PORT: '0', RX_DATA_DIR: path.join(os.tmpdir(), `rx-policy-server-main-${process.pid}`) });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setInterval(() => {
          const m = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(p.out());
          if (m) {
            clearInterval(timer);
            resolve(m[1]!);
          }
        }, 50);
        void p.exited.then(() => {
          clearInterval(timer);
          reject(new Error(`exited early: ${p.err()}`));
        });
      });
      const res = await fetch(`${url}/health`);
      expect(await res.json()).toEqual({ status: 'ok', backend: true, backendKind: 'embedded' });
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(p.out()).toContain('SIGTERM: finishing running work');
      expect(p.out()).toContain('policy-server: closed');
      expect(p.err()).toBe('');
    } finally {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
    }
  });
});
