// The policy server binds loopback unless told otherwise: its real main.ts with no HOST listens on 127.0.0.1
// only, so a connection to any other address of this machine is refused.
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { launch } from './service-process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

jest.setTimeout(60_000);

function tryConnect(host: string, port: number): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.setTimeout(2000, () => {
      s.destroy();
      resolve('timeout');
    });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

it('listens on 127.0.0.1 only when HOST is not set', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rx-bind-'));
  // main.ts prints a plain line, not a JSON ready line: wait for it by polling the process output
  const proc = await launch({ name: 'policy-server', entry: 'apps/policy-server/testing/memory.main.ts', env: { PORT: '0', RX_DATA_DIR: dir }, logFile: path.join(dir, 'ps.log'), waitReady: false });
  try {
    let m: RegExpExecArray | null = null;
    for (let i = 0; i < 600 && !m; i++) {
      m = / at http:\/\/([^:\s]+):(\d+)/.exec(proc.tail());
      if (!m) await new Promise((r) => setTimeout(r, 50));
    }
    expect(m?.[1]).toBe('127.0.0.1');
    const port = Number(m![2]);
    expect(await tryConnect('127.0.0.1', port)).toBe('connected');
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a): a is NonNullable<typeof a> => !!a && a.family === 'IPv4' && !a.internal)
      .map((a) => a.address);
    for (const address of others) expect([address, await tryConnect(address, port)]).toEqual([address, 'ECONNREFUSED']);
  } finally {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
