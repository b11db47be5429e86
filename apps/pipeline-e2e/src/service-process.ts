// TEST HARNESS. A pipeline service as a child process, started exactly as the Dockerfile starts it
// (node -r ./tools/register.js apps/<svc>/src/main.ts, by @rx/local-stack, so it ends with the test): waited on
// until it logs `ready`, killed or stopped with SIGTERM, its output kept for failure messages.
import type { ChildProcess } from 'node:child_process';
import { REPO_ROOT, startNodeProcess } from '@rx/local-stack';

export { REPO_ROOT };

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

/** `entry`: the service's main.ts, or a test entry point of its own (apps/<svc>/testing/hash-chain.main.ts) */
export async function startServiceProcess(name: string, env: Record<string, string>, entry = `apps/${name}/src/main.ts`, timeoutMs = 30_000): Promise<ServiceProcess> {
  const p = await startNodeProcess({ name, entry, env, baseEnv: { ...process.env } as Record<string, string>, readyTimeoutMs: timeoutMs });
  return {
    name,
    url: p.url ?? '',
    child: p.child,
    output: () => p.output(Number.MAX_SAFE_INTEGER),
    stop: async () => (await p.stop(60_000)).code,
    kill: async () => {
      await p.kill('SIGKILL');
    },
  };
}
