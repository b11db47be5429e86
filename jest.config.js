// `npm test`: unit tests (*.spec.ts) and Redis-backed integration tests (*.int-spec.ts).
// Integration tests use the Redis at REDIS_URL (default 127.0.0.1:6379); tools/testing/redis-global-setup.js
// starts a private redis-server when nothing answers there.
const preset = require('./jest.preset');
module.exports = {
  ...preset,
  testMatch: ['<rootDir>/{apps,libs,tools}/**/*.spec.ts', '<rootDir>/{apps,libs,tools}/**/*.int-spec.ts'],
  globalSetup: '<rootDir>/tools/testing/redis-global-setup.js',
  globalTeardown: '<rootDir>/tools/testing/redis-global-teardown.js',
};
