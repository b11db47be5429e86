import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { isRedisUnavailable, OutOfOrderStepError, UnrecoverableStageError } from './stage-errors';

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('isRedisUnavailable', () => {
  it('recognises the errors ioredis gives when nothing answers', async () => {
    const port = await closedPort();
    // as the producer connection is configured: no offline queue
    const offline = new Redis({ port, host: '127.0.0.1', enableOfflineQueue: false, maxRetriesPerRequest: 2, retryStrategy: () => null, lazyConnect: true });
    offline.on('error', () => undefined);
    const notWritable = await offline.get('k').catch((e: unknown) => e);
    expect(isRedisUnavailable(notWritable)).toBe(true);
    offline.disconnect();

    const queued = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: (n) => (n > 2 ? null : 10) });
    queued.on('error', () => undefined);
    // it gives up reconnecting after the third try
    const ended = new Promise<void>((resolve) => queued.once('end', () => resolve()));
    const gaveUp = await queued.get('k').catch((e: unknown) => e);
    expect(gaveUp).toBeInstanceOf(Error);
    expect(isRedisUnavailable(gaveUp)).toBe(true);
    await ended;
  });

  it('leaves the stage\'s own failures alone', () => {
    expect(isRedisUnavailable(new Error('backend unavailable'))).toBe(false);
    expect(isRedisUnavailable(new UnrecoverableStageError('step 3 already applied'))).toBe(false);
    expect(isRedisUnavailable(new OutOfOrderStepError('step 2 not committed'))).toBe(false);
    expect(isRedisUnavailable(Object.assign(new Error('ERR wrong number of arguments'), { name: 'ReplyError' }))).toBe(false);
    expect(isRedisUnavailable('ECONNREFUSED')).toBe(false);
  });
});
