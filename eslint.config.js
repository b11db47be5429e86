// Module boundaries: pure domain libs import nothing but other pure libs and zod; no framework, no I/O.
const nx = require('@nx/eslint-plugin');
const tseslint = require('typescript-eslint');

const ioModules = ['@nestjs/*', 'bullmq', 'ioredis', 'prom-client', 'node:fs', 'fs', 'node:net', 'node:http', 'express', '@tensorflow/*', 'node:child_process'];

module.exports = [
  { ignores: ['**/node_modules/**', 'dist/**', 'runs/**', 'tmp/**', '**/*.js'] },
  ...tseslint.configs.base ? [tseslint.configs.base] : [],
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          // the policy server loads the embedded model lazily in production; its tests import it statically
          checkDynamicDependenciesExceptions: ['@rx/embedded-model'],
          depConstraints: [
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain'], bannedExternalImports: ioModules },
            { sourceTag: 'type:schema', onlyDependOnLibsWithTags: ['type:domain', 'type:schema'], bannedExternalImports: ioModules },
            { sourceTag: 'type:contract', onlyDependOnLibsWithTags: ['type:domain', 'type:schema', 'type:contract'], bannedExternalImports: ioModules },
            { sourceTag: 'type:backend', onlyDependOnLibsWithTags: ['type:domain', 'type:schema', 'type:backend', 'type:infra'] },
            { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:domain', 'type:schema', 'type:contract', 'type:infra'] },
            { sourceTag: 'type:stage', onlyDependOnLibsWithTags: ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra', 'type:stage'] },
          ],
        },
      ],
    },
  },
];
