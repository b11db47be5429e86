// Runs the TypeScript sources directly (no build step): swc transpiles with decorator metadata and the
// tsconfig path aliases (@rx/*) resolve to libs/*/src.
process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || require('node:path').join(__dirname, '..', 'tsconfig.base.json');
require('@swc-node/register');
