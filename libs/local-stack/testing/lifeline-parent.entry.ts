// Entry point for the lifeline tests: a parent that starts what rx run starts (a private redis-server under its
// guard, a Node service with the preload), prints their pids as one JSON line, then waits to be killed.
import { startNodeProcess, startPrivateRedis } from '@rx/local-stack';

async function main(): Promise<void> {
  const redis = await startPrivateRedis({ dataDir: process.argv[2] });
  const child = await startNodeProcess({ name: 'idle', entry: 'libs/local-stack/testing/idle-service.entry.ts', env: {}, waitReady: true, readyTimeoutMs: 60_000 });
  process.stdout.write(`${JSON.stringify({ event: 'started', redisUrl: redis.url, redisServer: await redis.serverPid(), child: child.pid })}\n`);
  setInterval(() => undefined, 60_000);
}

void main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
