// Phase 3, the shared initialisation: one LoRA state created once (the spec's rank and seed), saved once; both
// arms load it before their first update (the trainer loads `initStatePath` when it creates an arm's client).
// Evidence: each arm's client, loaded from that state, computes the logprobs of a fixed batch before any update;
// the outputs must be the same for both arms within the spec's same-output tolerance (rx's default where the spec
// is silent: a GPU service's logprobs move with batch composition), the measured max |difference| kept as evidence
// and the bit-for-bit sha256 beside it. The same state's sampler weights are the "base"
// model of the evaluation (LoRA at its initial state). Per arm, the restore itself is evidence too: the path loaded,
// that the load succeeded, the adapter's sha256 in the state the arm's client holds right after it (saved again
// and its adapter hashed from the checkpoint's archive over the wire, see adapter-hash.ts) and the optimizer step
// it restored. A service that refuses the spec's per-model seed gets the model created once without it (the Tinker
// client does that); shared-init.json, effective-config.json and the record say so.
import type { Datum } from '@rx/backend';
import { buildDatum } from '@rx/pipeline';
import { sameOutputTolerance } from '@rx/spec';
import { RunStopped, type ExperimentContext } from '../experiment/experiment-context';
import { loraFor } from '@rx/step-schedule';
import { sha256Json } from '@rx/run-dir';
import { readRunFile, writeRunFile, type ArmRestore, type SharedInitResult } from '@rx/run-dir';
import { adapterHash } from './adapter-hash';
import { unloadQuietly } from './unload-model';
import { compareSameOutput, describeSameOutput, worseOf } from './same-output';

/**
 * The service refused the spec's seed at create_model (the model was created once without it): effective-config.json
 * says so, since the seed no longer decides the initial adapter.
 */
function amendEffectiveSeed(ctx: Pick<ExperimentContext, 'dir' | 'progress'>, requested: number, refusal: string): void {
  const effective = readRunFile(ctx.dir, 'effective-config.json');
  writeRunFile(ctx.dir, 'effective-config.json', { ...effective, lora_seed: { requested, sent: false, refusal } });
  ctx.progress.warn(`the service refused the per-model seed ${requested}: the shared initial state was created without it (effective-config.json lora_seed)`);
}

/** Eight training prompts with a short fixed completion each, rendered by the run's renderer (valid tokens for the model). */
export function initProbeDatums(ctx: Pick<ExperimentContext, 'renderer' | 'data'>): Datum[] {
  const completion = ctx.renderer.encode('1+1=2. \\boxed{2}');
  return ctx.data.train.slice(0, 8).map((p) => {
    const prompt = ctx.renderer.buildPrompt(p.question);
    return buildDatum(prompt, completion, new Array<number>(completion.length).fill(-1), 0);
  });
}

export async function runSharedInit(ctx: Pick<ExperimentContext, 'spec' | 'backend' | 'renderer' | 'data' | 'dir' | 'progress'> & { manifest: { runId: string } }): Promise<SharedInitResult> {
  const { spec } = ctx;
  const first = spec.arms[0];
  const lora = loraFor(spec, first);
  const mismatched = spec.arms.filter((a) => a.seed !== first.seed);
  if (mismatched.length > 0) throw new RunStopped(`the arms do not share one seed (${spec.arms.map((a) => `${a.name}: ${a.seed}`).join(', ')}): no shared initial state`, 'shared_init');
  const init = await ctx.backend.createLoraTrainingClient(lora);
  const name = `${ctx.manifest.runId}-init`;
  const state_path = await init.saveState(name);
  const sampler_path = await init.saveWeightsForSampler(name);

  const datums = initProbeDatums(ctx);
  const arms: SharedInitResult['arms'] = {};
  const outputs: number[][][] = [];
  for (const arm of spec.arms) {
    const client = await ctx.backend.createLoraTrainingClient(loraFor(spec, arm));
    await client.loadState(state_path);
    const loaded_at = new Date().toISOString();
    const resaved_state_path = await client.saveState(`${name}-${arm.name}-restored`);
    const out = await client.forwardBackward(datums, 'importance_sampling');
    const restore: ArmRestore = { loaded_state_path: state_path, load_succeeded: true, restore_count: 1, resaved_state_path, adapter: await adapterHash(ctx.backend, resaved_state_path), loaded_at };
    arms[arm.name] = { output_sha256: sha256Json(out.logprobs), restore };
    outputs.push(out.logprobs);
    // its evidence is taken and its state saved: the model itself is not needed any more (the service's quota)
    await unloadQuietly((l) => ctx.progress.warn(l), client, `${arm.name}'s restore check`);
  }
  const hashes = new Set(Object.values(arms).map((a) => a.output_sha256));
  const tolerance = sameOutputTolerance(spec);
  const same_output = outputs.slice(1).map((o) => compareSameOutput(o, outputs[0], tolerance)).reduce(worseOf, compareSameOutput(outputs[0], outputs[0], tolerance));
  const result: SharedInitResult = {
    state_path,
    sampler_path,
    lora: { base_model: lora.baseModel, rank: lora.rank, seed: lora.seed, seed_refused: init.seedRefused ?? null },
    fixed_batch_sha256: sha256Json(datums),
    adapter: await adapterHash(ctx.backend, state_path),
    arms,
    identical: hashes.size === 1,
    same_output,
    probe_logprobs: outputs[0],
  };
  await unloadQuietly((l) => ctx.progress.warn(l), init, 'the shared initial state');
  if (init.seedRefused) amendEffectiveSeed(ctx, lora.seed, init.seedRefused);
  writeRunFile(ctx.dir, 'shared-init.json', result);
  for (const [what, a] of [['shared state', result.adapter], ...Object.entries(arms).map(([n, x]) => [`${n} restored`, x.restore.adapter] as const)] as const) {
    if (a.sha256 === null) ctx.progress.warn(`adapter of the ${what}: no bytes from the service (${a.unavailable ?? a.source}); the record names the evidence that stands in`);
  }
  const bitwise = result.identical ? 'bit-identical' : `hashes ${[...hashes].map((h) => h.slice(0, 12)).join(' / ')}`;
  ctx.progress.info(`shared initialisation: ${state_path}; arms' outputs ${bitwise}; ${describeSameOutput(same_output)}: ${same_output.pass ? 'the same' : 'DIFFER'}`);
  if (!same_output.pass) {
    throw new RunStopped(`the arms loaded from the shared initial state differ on the fixed batch beyond the tolerance: ${describeSameOutput(same_output)}`, 'shared_init');
  }
  return result;
}
