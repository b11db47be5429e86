// Everything a chaos run needs, started the way a deployment starts it, with this tool as the supervisor:
// a private Redis with a password and AOF, the policy server on a fixed port, and sampler, grader, advantage
// and trainer as child processes running their real main.ts (the Dockerfile's command). crash(target)
// SIGKILLs one and starts it again as a supervisor would; each process appends its output to <dir>/logs.
import * as path from 'node:path';
import { unusedPort as freePort } from '@rx/backend/testing';
import { startPrivateRedis, type PrivateRedis } from './private-redis';
import { launch, type ManagedProcess } from './service-process';

export const PIPELINE_SERVICES = ['sampler', 'grader', 'advantage', 'trainer'] as const;
export type PipelineServiceName = (typeof PIPELINE_SERVICES)[number];
export type ProcessTarget = PipelineServiceName | 'policy-server';

export interface ChaosStackOptions {
  /** where logs, data and the Redis AOF go */
  dir: string;
  model: 'hash-chain' | 'embedded';
  baseCheckpoint?: string;
  /** the API key the policy server requires and the services send */
  apiKey: string;
  redisPassword?: string;
  /** extra latency of each policy-server request (widens the windows faults land in) */
  policyLatencyMs?: number;
  /** the workers' job lock and stall check: how soon a killed worker's job is handed on */
  lockMs?: number;
  stalledIntervalMs?: number;
  prefix?: string;
}

export class ChaosStack {
  private readonly procs = new Map<ProcessTarget, ManagedProcess>();
  readonly restarts: Record<ProcessTarget, number> = { sampler: 0, grader: 0, advantage: 0, trainer: 0, 'policy-server': 0 };

  private constructor(
    readonly opts: ChaosStackOptions,
    readonly redis: PrivateRedis,
    readonly policyPort: number,
    readonly prefix: string,
  ) {}

  static async start(opts: ChaosStackOptions): Promise<ChaosStack> {
    const redis = await startPrivateRedis({ dir: path.join(opts.dir, 'redis'), password: opts.redisPassword });
    const stack = new ChaosStack(opts, redis, await freePort(), opts.prefix ?? 'chaos');
    try {
      await stack.startProcess('policy-server');
      await Promise.all(PIPELINE_SERVICES.map((s) => stack.startProcess(s)));
    } catch (err) {
      await stack.close();
      throw err;
    }
    return stack;
  }

  get logsDir(): string {
    return path.join(this.opts.dir, 'logs');
  }

  get policyDataDir(): string {
    return path.join(this.opts.dir, 'policy-server');
  }

  get servicesDataDir(): string {
    return path.join(this.opts.dir, 'services');
  }

  get policyUrl(): string {
    return `http://127.0.0.1:${this.policyPort}`;
  }

  /** what every pipeline service (and the chaos controller) is given */
  serviceEnv(): Record<string, string> {
    return {
      REDIS_URL: this.redis.url,
      RX_BACKEND_URL: this.policyUrl,
      TINKER_API_KEY: this.opts.apiKey,
      RX_QUEUE_PREFIX: this.prefix,
      RX_DATA_DIR: this.servicesDataDir,
      RX_CONCURRENCY: '16',
      RX_LOCK_MS: String(this.opts.lockMs ?? 2000),
      RX_STALLED_INTERVAL_MS: String(this.opts.stalledIntervalMs ?? 500),
      HOST: '127.0.0.1',
      PORT: '0',
    };
  }

  private env(target: ProcessTarget): Record<string, string> {
    if (target !== 'policy-server') return this.serviceEnv();
    return {
      HOST: '127.0.0.1',
      PORT: String(this.policyPort),
      RX_DATA_DIR: this.policyDataDir,
      RX_POLICY_API_KEY: this.opts.apiKey,
      RX_POLICY_LATENCY_MS: String(this.opts.policyLatencyMs ?? 0),
      CHAOS_MODEL: this.opts.model,
      ...(this.opts.baseCheckpoint ? { CHAOS_BASE_CHECKPOINT: this.opts.baseCheckpoint } : {}),
    };
  }

  private async startProcess(target: ProcessTarget): Promise<ManagedProcess> {
    const entry = target === 'policy-server' ? 'tools/chaos/policy-server.process.ts' : `apps/${target}/src/main.ts`;
    const proc = await launch({ name: target, entry, env: this.env(target), logFile: path.join(this.logsDir, `${target}.log`), readyTimeoutMs: 90_000 });
    this.procs.set(target, proc);
    return proc;
  }

  process(target: ProcessTarget): ManagedProcess | undefined {
    return this.procs.get(target);
  }

  /** SIGKILL, then a restart (what a supervisor does); resolves once the new process is ready */
  async crash(target: ProcessTarget): Promise<void> {
    await this.procs.get(target)?.kill('SIGKILL');
    await this.startProcess(target);
    this.restarts[target]++;
  }

  /** every process that exited without being asked to (a crash nobody injected) */
  unexpectedExits(): string[] {
    return [...this.procs.values()].filter((p) => !p.running()).map((p) => `${p.name}: ${p.tail(600)}`);
  }

  async close(): Promise<Record<string, number | null>> {
    const codes: Record<string, number | null> = {};
    await Promise.all(
      [...this.procs.values()].map(async (p) => {
        const e = await p.stop(10_000);
        codes[p.name] = e.code;
      }),
    );
    await this.redis.close();
    return codes;
  }
}
