// rx run and rx status are the controller's own commands: the CLI runs apps/controller/src/main.ts as a child
// process (the apps stay separate projects) with the terminal attached, forwards SIGTERM, lets Ctrl-C reach
// both, and exits with the controller's exit code. An IPC channel ties the two: when the CLI dies however it
// dies, the controller sees the channel close and stops (no orphan controller drives the run on).
import { spawn } from 'node:child_process';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

export function runController(command: 'run' | 'status', argv: string[]): Promise<number> {
  const entry = path.join(REPO_ROOT, 'apps', 'controller', 'src', 'main.ts');
  const child = spawn(process.execPath, ['-r', path.join(REPO_ROOT, 'tools', 'register.js'), entry, command, ...argv], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
  const forward = (sig: NodeJS.Signals) => () => {
    // Ctrl-C already reached the child (same process group); SIGTERM sent to this process alone is passed on
    if (sig === 'SIGTERM') child.kill('SIGTERM');
  };
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code ?? (signal === 'SIGINT' ? 130 : 1));
    });
  });
}
