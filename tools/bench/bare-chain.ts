// The bare chain: the floor under the overhead benchmark's queue hops. Four child processes stand for the four
// services (bare-forwarder.entry.ts: the same queues, no stages); this process adds a step request and waits for
// the step event, as the controller does. A chain is the six jobs of one arm-step through the four processes,
// each carrying the payload its queue carried in a real step: what BullMQ, Redis and waking the processes cost
// with no parsing, no stage and no store, on this machine, idle or under the load a round puts on it.
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Queue, Worker } from 'bullmq';
import type { QueueName } from '@rx/contracts';
import { RedisConnectionFactory } from '@rx/queue';
import { startNodeProcesses, stopAll, type BenchProcess } from './bench-process';
import { benchPrefix, deletePrefix, redisUrl, SERVICES } from './service-stack';

/** `<chain id>.<queue>`: the job id of a chain's job on a queue */
export function chainJobId(chain: string, queue: string): string {
  return `${chain}.${queue}`;
}

/** the chain a job id of chainJobId's belongs to */
export function chainOfJobId(jobId: string | undefined): string {
  return String(jobId).split('.')[0];
}

export interface BareChainOptions {
  /** queue -> the payload a real step put on it (all six queues of a step) */
  payloads: Partial<Record<QueueName, unknown>>;
  /** a directory for the payload file */
  work: string;
  /** one per chain: started before the chain and awaited after it, the load the chain runs under (an untimed step, or nothing) */
  rounds: ReadonlyArray<() => Promise<unknown>>;
  /** ms from starting a round's load to adding the chain's first job */
  offsetMs: number;
  /** the BullMQ prefix (default: a fresh bench prefix); deleted at the end */
  prefix?: string;
  /** called with each step event's job id and data as it arrives */
  onEvent?: (jobId: string, data: unknown) => void;
}

/** ms from adding a chain's step request to receiving its step event, one per round */
export async function bareChainMs(o: BareChainOptions): Promise<number[]> {
  const prefix = o.prefix ?? benchPrefix('bare-chain');
  const payloadFile = path.join(o.work, 'bare-chain-payloads.json');
  writeFileSync(payloadFile, JSON.stringify(o.payloads));
  const env = (service: string) => ({ REDIS_URL: redisUrl(), RX_QUEUE_PREFIX: prefix, RX_BENCH_SERVICE: service, RX_BENCH_CHAIN_PAYLOADS: payloadFile });
  const processes: BenchProcess[] = [];
  const connections = new RedisConnectionFactory(redisUrl(), { connectionName: 'rx-bench-bare-chain' });
  const requests = new Queue('step-requests', { connection: connections.producer(), prefix });
  const arrived = new Map<string, () => void>();
  const events = new Worker(
    'step-events',
    async (job) => {
      o.onEvent?.(String(job.id), job.data);
      arrived.get(chainOfJobId(job.id))?.();
    },
    { connection: connections.worker(), prefix },
  );
  try {
    processes.push(...(await startNodeProcesses(SERVICES.map((s) => ({ name: `bare-${s}`, script: 'tools/bench/bare-forwarder.entry.ts', env: env(s) })))));
    await events.waitUntilReady();
    const times: number[] = [];
    for (const [round, during] of o.rounds.entries()) {
      const load = during();
      await new Promise((r) => setTimeout(r, o.offsetMs));
      const chain = `chain${round}`;
      const done = new Promise<void>((resolve) => arrived.set(chain, resolve));
      const t = performance.now();
      await requests.add('prepare', o.payloads['step-requests'], { jobId: chainJobId(chain, 'step-requests'), removeOnComplete: true });
      await done;
      times.push(performance.now() - t);
      await load;
    }
    return times;
  } finally {
    await events.close().catch(() => undefined);
    await requests.close().catch(() => undefined);
    await connections.close().catch(() => undefined);
    await stopAll(processes);
    await deletePrefix(prefix).catch(() => undefined);
  }
}
