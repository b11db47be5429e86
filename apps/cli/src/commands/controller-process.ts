// rx run is the controller's own command: the CLI runs apps/controller/src/main.ts as a child
// process (the apps stay separate projects, @rx/local-stack starts it) with the terminal attached, passes SIGINT and
// SIGTERM on (a Ctrl-C reaches both anyway; the controller takes signals within a second of each other as one), and
// exits with the controller's exit code. An IPC channel ties the two: when the CLI dies however it dies, the
// controller sees the channel close and stops (no orphan controller drives the run on). When the controller dies
// (SIGKILL, the OOM killer), the CLI says so in one line with the command that continues the run.
import { launchNodeChild } from '@rx/local-stack';

/** the run directory an rx run command line names (--resume wins over --out), or null */
export function runDirOf(argv: readonly string[]): string | null {
  const value = (flag: string): string | null => {
    for (let i = 0; i < argv.length; i++) {
      if (argv[i] === flag && i + 1 < argv.length) return argv[i + 1];
      if (argv[i].startsWith(`${flag}=`)) return argv[i].slice(flag.length + 1);
    }
    return null;
  };
  return value('--resume') ?? value('--out');
}

/** one line when the controller ended by a signal the CLI did not pass on (null: it ended by itself) */
export function controllerDiedLine(argv: readonly string[], signal: NodeJS.Signals | null, code: number | null, forwarded: boolean): string | null {
  if (forwarded) return null;
  const how = signal ? `was killed (${signal})` : code === 137 ? 'was killed (exit 137)' : null;
  if (!how) return null;
  const dir = runDirOf(argv);
  const quoted = dir === null ? '<run dir>' : /^[\w./:@%+,-]+$/.test(dir) ? dir : `'${dir.replace(/'/g, `'\\''`)}'`;
  return `rx: the controller ${how}; the run directory keeps what is done: continue with rx run --resume ${quoted}`;
}

export function runController(argv: string[]): Promise<number> {
  // the IPC channel is the controller's lifeline (main.ts watches it): no lifeline pipe of its own
  const child = launchNodeChild({ entry: 'apps/controller/src/main.ts', args: ['run', ...argv], stdio: ['inherit', 'inherit', 'inherit', 'ipc'], lifeline: false, cwd: process.cwd() });
  let forwarded = false;
  // a signal sent to this process alone (kill -INT <pid>, a supervisor) must stop the run as Ctrl-C does
  const forward = (sig: NodeJS.Signals) => () => {
    forwarded = true;
    child.kill(sig);
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
      const died = controllerDiedLine(argv, signal, code, forwarded);
      if (died) process.stderr.write(`\n${died}\n`);
      resolve(code ?? (signal === 'SIGINT' ? 130 : signal ? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1) : 1));
    });
  });
}
