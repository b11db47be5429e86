// Whether a command is on PATH (redis-server), without starting it.
import { accessSync, constants } from 'node:fs';
import * as path from 'node:path';

export function onPath(command: string, envPath = process.env.PATH ?? ''): boolean {
  return envPath.split(path.delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
