#!/usr/bin/env node
// `npx rx ...` (and `rx` once the package is linked): runs the CLI's TypeScript sources directly, no build step.
require('../tools/register.js');
require('../apps/cli/src/main.ts');
