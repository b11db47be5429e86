// The lifeline for real: a parent process starts a private redis-server (under its guard) and a Node service, and
// is SIGKILLed; 5 s later none of its processes runs. And a parent that ends normally takes them with it too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { descendants, LIFELINE_PARENT_ENTRY, waitGone } from '@rx/local-stack/testing';
import { launchNodeChild } from './child-process';
import { redisAnswers, startPrivateRedis } from './private-redis';

jest.setTimeout(120_000);

interface Started {
  redisUrl: string;
  redisServer: number;
  child: number;
}

async function startParent(dataDir: string): Promise<{ pid: number; started: Started; kill: (s: NodeJS.Signals) => void }> {
  // the parent itself without a lifeline: this test plays the user who kills it
  const parent = launchNodeChild({ entry: LIFELINE_PARENT_ENTRY, args: [dataDir], lifeline: false, env: { ...process.env } });
  let out = '';
  const started = await new Promise<Started>((resolve, reject) => {
    parent.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as Started);
    });
    parent.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    parent.once('exit', (code) => reject(new Error(`the parent exited (${code}) before it started its children: ${out}`)));
  });
  return { pid: parent.pid as number, started, kill: (s) => parent.kill(s) };
}

describe('lifeline', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(path.join(tmpdir(), 'rx-lifeline-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it.each(['SIGKILL', 'SIGTERM'] as const)('a parent ended by %s leaves no child, private Redis included, alive 5 s later', async (signal) => {
    const parent = await startParent(dataDir);
    const tree = descendants(parent.pid).map((d) => d.pid);
    // the guard, the redis-server, the service
    expect(tree).toEqual(expect.arrayContaining([parent.started.redisServer, parent.started.child]));
    expect(tree.length).toBeGreaterThanOrEqual(3);
    expect(await redisAnswers(parent.started.redisUrl)).toBe(true);
    parent.kill(signal);
    const left = await waitGone(tree, 5_000);
    for (const pid of left) process.kill(pid, 'SIGKILL'); // a failing run leaves nothing behind either
    expect(left).toEqual([]);
    expect(await redisAnswers(parent.started.redisUrl)).toBe(false);
  });

  it('a private Redis keeps its data across a restart and is started again by its guard after a crash', async () => {
    const redis = await startPrivateRedis({ dataDir, appendfsync: 'always', restartOnCrash: true });
    try {
      const { Redis } = await import('ioredis');
      const a = new Redis(redis.url, { maxRetriesPerRequest: null });
      await a.set('kept', 'yes');
      const first = await redis.serverPid();
      process.kill(first, 'SIGKILL');
      expect(await waitGone([first], 5_000)).toEqual([]);
      expect(await a.get('kept')).toBe('yes');
      expect(await redis.serverPid()).not.toBe(first);
      a.disconnect();
    } finally {
      await redis.close();
    }
    expect(redis.running()).toBe(false);
  });
});
