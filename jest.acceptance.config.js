// Acceptance tests (*.acceptance.ts) read the shared material at ../shared (or RX_SHARED_DIR); run by .ci/run.
const preset = require('./jest.preset');
module.exports = {
  ...preset,
  testMatch: ['<rootDir>/{apps,libs,tools}/**/*.acceptance.ts'],
  globalSetup: '<rootDir>/tools/testing/redis-global-setup.js',
  globalTeardown: '<rootDir>/tools/testing/redis-global-teardown.js',
};
