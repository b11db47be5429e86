// rx run, rx status, rx export and rx check-record are the controller's own commands: the CLI runs apps/controller/src/main.ts as a child
// process (the apps stay separate projects) with the terminal attached, passes SIGINT and SIGTERM on (a Ctrl-C
// reaches both anyway; the controller takes signals within a second of each other as one), and exits with the
// controller's exit code. An IPC channel ties the two: when the CLI dies however it
// dies, the controller sees the channel close and stops (no orphan controller drives the run on).
import { spawn } from 'node:child_process';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

export function runController(command: 'run' | 'status' | 'export' | 'check-record', argv: string[]): Promise<number> {
  const entry = path.join(REPO_ROOT, 'apps', 'controller', 'src', 'main.ts');
  const child = spawn(process.execPath, ['-r', path.join(REPO_ROOT, 'tools', 'register.js'), entry, command, ...argv], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
  // a signal sent to this process alone (kill -INT <pid>, a supervisor) must stop the run as Ctrl-C does
  const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
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
