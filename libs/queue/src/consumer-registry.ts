// The cross-service half of the start-up check: each queue is consumed by one service. The first service to
// start on a queue records itself (SET NX); a different service starting on it is refused. Replicas of the
// same service share the registration.
import type { Redis } from 'ioredis';
import type { QueueName } from '@rx/contracts';

export class QueueOwnershipError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QueueOwnershipError';
  }
}

export async function registerConsumer(redis: Redis, prefix: string, service: string, queues: readonly QueueName[]): Promise<void> {
  for (const queue of queues) {
    const key = `${prefix}:consumers:${queue}`;
    const set = await redis.set(key, service, 'NX');
    if (set === 'OK') continue;
    const owner = await redis.get(key);
    if (owner !== service) {
      throw new QueueOwnershipError(`${service}: refusing to start: queue '${queue}' is already consumed by service '${owner}' (prefix '${prefix}')`);
    }
  }
}
