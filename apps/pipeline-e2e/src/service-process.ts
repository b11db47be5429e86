// TEST HARNESS. A pipeline service as a child process, started exactly as the Dockerfile starts it
// (node -r ./tools/register.js apps/<svc>/src/main.ts): waited on until it logs `ready`, killed or stopped with
// SIGTERM, its output kept for failure messages.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

export interface ServiceProcess {
  readonly name: string;
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash), then the exit */
  kill(): Promise<void>;
}

export function startServiceProcess(name: string, env: Record<string, string>, timeoutMs = 30_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['-r', './tools/register.js', `apps/${name}/src/main.ts`], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise<ServiceProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not get ready within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onLine = (line: string) => {
      try {
        const event = JSON.parse(line) as { event?: string; url?: string };
        if (event.event === 'ready' && event.url) {
          clearTimeout(timer);
          resolve({
            name,
            url: event.url,
            child,
            output: () => out,
            stop: async () => {
              if (child.exitCode === null) child.kill('SIGTERM');
              return exited;
            },
            kill: async () => {
              if (child.exitCode === null) child.kill('SIGKILL');
              await exited;
            },
          });
        }
      } catch {
        /* not a JSON line */
      }
    };
    let pending = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      pending += d.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(onLine);
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready:\n${out}`));
    });
  });
}
