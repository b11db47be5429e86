// The repository root (this file is libs/local-stack/src/repo-root.ts): where the services' entry points,
// tools/register.js and the sources hashed into the run record live.
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
