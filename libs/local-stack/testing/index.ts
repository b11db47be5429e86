// Test support of @rx/local-stack: process trees, and the entry points the lifeline tests start.
import * as path from 'node:path';

export { childExit } from './child-exit';
export { descendants, stillRunning, waitGone } from './process-tree';

/** a parent that starts a private Redis and a Node service, prints their pids, and waits to be killed */
export const LIFELINE_PARENT_ENTRY = path.join(__dirname, 'lifeline-parent.entry.ts');
