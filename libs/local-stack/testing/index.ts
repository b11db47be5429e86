// Test support of @rx/local-stack: process trees, and the entry points the lifeline tests start.
import * as path from 'node:path';

export { childExit } from './child-exit';
export { descendants, stillRunning, waitGone } from './process-tree';

/** a parent that starts a private Redis and a Node service, prints their pids, and waits to be killed */
export const LIFELINE_PARENT_ENTRY = path.join(__dirname, 'lifeline-parent.entry.ts');

/**
 * The entry a test starts a pipeline service through over the hash-chain test policy: a service that calls the model
 * (sampler, trainer) through its own test entry point (apps/<service>/testing/hash-chain.main.ts), one that never
 * does (grader, advantage) through its main.ts.
 */
export function hashChainEntry(service: string): string {
  return service === 'sampler' || service === 'trainer' ? `apps/${service}/testing/hash-chain.main.ts` : `apps/${service}/src/main.ts`;
}
