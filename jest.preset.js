// Shared jest settings: swc transpiles TypeScript (with Nest decorator metadata); @rx/* resolve to libs/*/src.
const path = require('node:path');
const root = __dirname;
module.exports = {
  rootDir: root,
  testEnvironment: 'node',
  // CLI and service tests spawn real processes; on a loaded 2-core machine a spawn can take seconds
  testTimeout: 60000,
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        sourceMaps: 'inline',
        jsc: {
          target: 'es2022',
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
        },
        module: { type: 'commonjs' },
      },
    ],
    // @nestjs/terminus ships ES modules only: compile it to CommonJS for jest
    '^.+/node_modules/@nestjs/terminus/.+\\.js$': [
      '@swc/jest',
      { jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/terminus/)'],
  moduleNameMapper: {
    // a lib's test doubles: their own project (type:testing) beside the lib, imported only by tests and tools
    '^@rx/([a-z-]+)/testing$': path.join(root, 'libs/$1/testing/index.ts'),
    // an app's deliberate public entry (tools/ only; see eslint.config.js)
    '^@rx/(cli|controller|policy-server)$': path.join(root, 'apps/$1/src/public-api.ts'),
    '^@rx/([a-z-]+)$': path.join(root, 'libs/$1/src/index.ts'),
  },
  modulePathIgnorePatterns: ['<rootDir>/runs/', '<rootDir>/dist/', '<rootDir>/tmp/'],
  testPathIgnorePatterns: ['/node_modules/', '/runs/', '/dist/'],
};
