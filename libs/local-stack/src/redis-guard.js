// Entry point (plain JavaScript, so it starts in milliseconds: a Redis restart is downtime): a redis-server with a
// lifeline. redis-server cannot watch a pipe, so this small Node process starts it (its configuration passed on
// stdin, never on the command line) and stops it (SIGTERM: the AOF flushed) when the process that started the guard
// is gone, however it ended (EOF on the lifeline, see lifeline.ts), or when the guard is told to stop. With
// `restart` as its argument it starts the server again on the same configuration (port, password, data) after a
// crash, as a supervisor would; otherwise the guard exits with the server.
'use strict';
const { spawn } = require('node:child_process');
const { Socket } = require('node:net');

const RESTART_LIMIT = 20;

function watchLifeline(onParentGone) {
  const fd = Number(process.env.RX_LIFELINE_FD);
  delete process.env.RX_LIFELINE_FD;
  if (!Number.isInteger(fd) || fd < 3) return;
  const line = new Socket({ fd, readable: true, writable: false });
  let gone = false;
  const end = () => {
    if (gone) return;
    gone = true;
    onParentGone();
  };
  line.on('data', () => undefined);
  line.on('end', end);
  line.on('close', end);
  line.on('error', end);
  line.unref();
}

async function main() {
  const restart = process.argv.includes('restart');
  let config = '';
  for await (const chunk of process.stdin) config += String(chunk);
  let server = null;
  let stopping = false;
  let restarts = 0;

  const start = () => {
    const proc = spawn('redis-server', ['-'], { stdio: ['pipe', 'ignore', 'inherit'] });
    proc.stdin.end(config);
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

  const stop = () => {
    if (stopping) return;
    stopping = true;
    const s = server;
    if (!s || s.exitCode !== null || s.signalCode !== null) process.exit(0);
    s.kill('SIGTERM');
    setTimeout(() => {
      s.kill('SIGKILL');
      process.exit(0);
    }, 2000).unref();
  };

  watchLifeline(stop);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  start();
}

void main();
