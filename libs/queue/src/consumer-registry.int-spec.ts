import { QueueOwnershipError, registerConsumer } from './consumer-registry';
import { createRedisHarness } from '@rx/queue/testing';

const harness = createRedisHarness('consumers');
afterAll(() => harness.close());

describe('registerConsumer (cross-service start-up check)', () => {
  it('lets replicas of the owner start and refuses a second service on the same queue', async () => {
    const redis = harness.redis();
    await registerConsumer(redis, harness.prefix, 'grader', ['rollouts']);
    await registerConsumer(redis, harness.prefix, 'grader', ['rollouts']); // a second replica
    await expect(registerConsumer(redis, harness.prefix, 'advantage', ['graded-rollouts', 'rollouts'])).rejects.toBeInstanceOf(QueueOwnershipError);
    await expect(registerConsumer(redis, harness.prefix, 'advantage', ['rollouts'])).rejects.toThrow(
      `advantage: refusing to start: queue 'rollouts' is already consumed by service 'grader' (prefix '${harness.prefix}')`,
    );
    expect(await redis.get(`${harness.prefix}:consumers:graded-rollouts`)).toBe('advantage');
  });
});
