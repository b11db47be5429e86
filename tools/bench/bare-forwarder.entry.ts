// One pipeline service with its stages taken out, as a benchmark child process: the same BullMQ queues the service
// consumes (edgesOf), but each job is answered at once by adding the payload its edge produced in a real step
// (read from RX_BENCH_CHAIN_PAYLOADS) to the edge's produced queue. Four of these are the overhead benchmark's
// bare chain: the transport of a step (six jobs through four processes, the real payload sizes) and nothing else.
// Logs one JSON line {"event":"ready","url":...} when its workers are ready; SIGTERM closes them.
import { readFileSync } from 'node:fs';
import { Queue, Worker } from 'bullmq';
import { z } from 'zod';
import { edgesOf, type PipelineService } from '@rx/pipeline';
import { RedisConnectionFactory } from '@rx/queue';
import { chainJobId, chainOfJobId } from './bare-chain';

const envSchema = z.object({
  REDIS_URL: z.string().min(1),
  RX_QUEUE_PREFIX: z.string().min(1),
  RX_BENCH_SERVICE: z.enum(['sampler', 'grader', 'advantage', 'trainer']),
  /** a JSON file: queue name -> the payload a real step put on it */
  RX_BENCH_CHAIN_PAYLOADS: z.string().min(1),
});

async function main(): Promise<void> {
  const env = envSchema.parse(process.env);
  const payloads = JSON.parse(readFileSync(env.RX_BENCH_CHAIN_PAYLOADS, 'utf8')) as Record<string, unknown>;
  const connections = new RedisConnectionFactory(env.REDIS_URL, { connectionName: `rx-bench-bare-${env.RX_BENCH_SERVICE}` });
  const prefix = env.RX_QUEUE_PREFIX;
  const closers: Array<() => Promise<void>> = [];
  for (const edge of edgesOf(env.RX_BENCH_SERVICE as PipelineService)) {
    const next = new Queue(edge.produces, { connection: connections.producer(), prefix });
    const data = payloads[edge.produces];
    const worker = new Worker(
      edge.consumes,
      async (job) => {
        await next.add(edge.produces, data, { jobId: chainJobId(chainOfJobId(job.id), edge.produces), removeOnComplete: true });
      },
      { connection: connections.worker(), prefix },
    );
    await worker.waitUntilReady();
    closers.push(() => worker.close(), () => next.close());
  }
  process.stdout.write(`${JSON.stringify({ event: 'ready', url: `bare-forwarder://${env.RX_BENCH_SERVICE}` })}\n`);
  process.once('SIGTERM', () => {
    void Promise.all(closers.map((c) => c()))
      .then(() => connections.close())
      .finally(() => process.exit(0));
  });
}

void main().catch((err: Error) => {
  process.stderr.write(`bare forwarder: ${err.message}\n`);
  process.exit(1);
});
