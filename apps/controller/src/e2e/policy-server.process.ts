// A policy server started apart, as a user starts one (its own entry point, a child process of the test): the
// embedded model behind the Tinker wire, with a hosted-like configuration when given. Ready once
// GET /api/v1/healthz answers; its output is kept for failure messages and for the faults it says it injected.
import { readFileSync } from 'node:fs';
import { freePort, startNodeProcess, type NodeProcess } from '@rx/local-stack';

export interface PolicyServerProcess {
  url: string;
  process: NodeProcess;
  /** every line it printed so far (its log file) */
  output(): string;
  stop(): Promise<void>;
}

export async function startPolicyServerProcess(opts: { apiKey: string; dataDir: string; hostedLike?: object; logFile: string; env?: Record<string, string> }): Promise<PolicyServerProcess> {
  const port = await freePort();
  const env: Record<string, string> = { HOST: '127.0.0.1', PORT: String(port), RX_DATA_DIR: opts.dataDir, RX_POLICY_API_KEY: opts.apiKey };
  if (opts.hostedLike) env.RX_POLICY_HOSTED_LIKE = JSON.stringify(opts.hostedLike);
  Object.assign(env, opts.env);
  const child = await startNodeProcess({ name: 'policy-server', entry: 'apps/policy-server/src/main.ts', env, waitReady: false, logFile: opts.logFile });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (!child.running()) throw new Error(`the policy server exited before it served:\n${child.output()}`);
    const ok = await fetch(`${url}/api/v1/healthz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await child.kill();
      throw new Error(`the policy server did not answer /api/v1/healthz within 120 s:\n${child.output()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    process: child,
    output: () => readFileSync(opts.logFile, 'utf8'),
    stop: async () => {
      await child.stop(15_000);
    },
  };
}
