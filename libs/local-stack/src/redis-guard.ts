// Entry point: a redis-server with a lifeline. redis-server cannot watch a pipe, so this small Node process starts
// it (its configuration passed on stdin, never on the command line) and stops it (SIGTERM: an AOF flushed) when the
// process that started the guard is gone, however it ended, or when the guard is told to stop. With `restart` as its
// argument it starts the server again on the same configuration (port, password, data) after a crash, as a
// supervisor would; otherwise the guard exits with the server.
import type { ChildProcess } from 'node:child_process';
import { launchChild } from './child-process';
import { watchLifeline } from './lifeline';

const RESTART_LIMIT = 20;

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

async function main(): Promise<void> {
  const restart = process.argv.includes('restart');
  const config = await readStdin();
  let server: ChildProcess | null = null;
  let stopping = false;
  let restarts = 0;

  const start = (): void => {
    const proc = launchChild({ command: 'redis-server', args: ['-'], lifeline: false, stdio: ['pipe', 'ignore', 'inherit'] });
    proc.stdin?.end(config);
    proc.once('error', (err) => {
      process.stderr.write(`redis-guard: cannot start redis-server: ${err.message}\n`);
      process.exit(1);
    });
    proc.once('exit', (code, signal) => {
      if (stopping) process.exit(0);
      if (restart && restarts < RESTART_LIMIT) {
        restarts++;
        process.stderr.write(`redis-guard: redis-server exited (${code ?? signal}); starting it again on the same data (${restarts})\n`);
        setTimeout(start, 200);
        return;
      }
      process.exit(code ?? 1);
    });
    server = proc;
  };

  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    const s = server;
    if (!s || s.exitCode !== null || s.signalCode !== null) process.exit(0);
    s.kill('SIGTERM');
    setTimeout(() => {
      s.kill('SIGKILL');
      process.exit(0);
    }, 5_000).unref();
  };

  watchLifeline(stop);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  start();
}

void main();
