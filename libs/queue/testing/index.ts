// Test support of the queue lib (type:testing): each test file its own BullMQ prefix on the real Redis.
export * from './redis-test-harness';
