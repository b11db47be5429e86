// The edge runner around a stand-in stage: runEdge on the graph's edge that consumes `queue`, with its stage
// replaced by `stage`, resolving with what `stage` returned (the stand-in sends nothing on). For the tests of what
// the runner does around any stage: parsing, by-reference payloads, dead letters, time limits, retries, outages.
import type { PayloadOf, QueueName } from '@rx/contracts';
import { edgeOfQueue, NothingSent, runEdge, type AnyPipelineEdge, type ConsumedJob, type EdgeOfService, type EdgeRunnerDeps, type PipelineService } from '@rx/pipeline';

export async function runStandInStage<Q extends QueueName, R>(
  queue: Q,
  job: ConsumedJob,
  runner: Omit<EdgeRunnerDeps<PipelineService>, 'deps'>,
  stage: (payload: PayloadOf<Q>) => Promise<R>,
): Promise<R> {
  const edge = edgeOfQueue(queue);
  if (!edge) throw new Error(`queue '${queue}' has no edge in the pipeline graph`);
  let returned: R | undefined;
  const standIn: AnyPipelineEdge = {
    ...edge,
    async run(payload) {
      returned = await stage(payload as PayloadOf<Q>);
      return NothingSent.skipped('the stand-in stage sends nothing on');
    },
  };
  // the stand-in reads no stage dependencies
  await runEdge(standIn as EdgeOfService<PipelineService>, job, { ...runner, deps: {} as EdgeRunnerDeps<PipelineService>['deps'] });
  return returned as R;
}
