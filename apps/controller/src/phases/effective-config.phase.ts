// Phase 1: the effective configuration of the run, everything that decides what runs, in one file: the spec's
// own effective_config, the arms, the optimizer, the kernel and pilot settings pinned by the spec's prose, the
// sampling and evaluation settings, the data (with manifest hashes), the backend and the renderer.
import { budget, decisionRule, evalSettings, gateChecks, kernelSettings, optimizerSettings, pilotSettings, samplingSettings, sameOutputTolerance } from '@rx/spec';
import type { ExperimentContext } from '../experiment/experiment-context';
import { ARITH_DATASET_SEED, TRAIN_SHUFFLE_SEED } from '../experiment/experiment-data';
import { writeRunFile, type EffectiveConfig } from '@rx/run-dir';

export function writeEffectiveConfig(ctx: ExperimentContext): EffectiveConfig {
  const { spec } = ctx;
  const config = {
    run_id: ctx.manifest.runId,
    spec_sha256: ctx.manifest.spec.sha256,
    override: ctx.manifest.override,
    title: spec.title,
    feasibility_effective_config: spec.feasibility.effective_config,
    base_model: spec.base_model,
    lora_rank: spec.lora_rank,
    steps: spec.steps,
    batch_size: spec.batch_size,
    max_seq_len: spec.max_seq_len,
    arms: spec.arms.map((a) => ({ ...a, optimizer: optimizerSettings(spec, a.name) })),
    sampling: samplingSettings(spec),
    kernel: kernelSettings(spec),
    pilot: pilotSettings(spec),
    gates: gateChecks(spec),
    evaluation: evalSettings(spec),
    decision_rule: decisionRule(spec),
    budget: budget(spec),
    // every "same output" check (shared init, the preflight's copies) compares per-token logprobs with this
    same_output_tolerance: sameOutputTolerance(spec),
    data: {
      dataset: spec.dataset,
      source: ctx.data.source,
      arith_seed: spec.dataset.name === 'arith' ? ARITH_DATASET_SEED : null,
      train_shuffle_seed: TRAIN_SHUFFLE_SEED,
      n_train: ctx.data.train.length,
      n_test: ctx.data.test.length,
      train_manifest_sha256: ctx.data.trainManifestSha256,
      test_manifest_sha256: ctx.data.testManifestSha256,
    },
    backend: ctx.manifest.backend,
    services: ctx.manifest.services,
    renderer: { name: ctx.renderer.name, stop_tokens: ctx.renderer.stopTokens },
    tokenizer: ctx.tokenizer ?? null,
  };
  writeRunFile(ctx.dir, 'effective-config.json', config);
  ctx.progress.info(`effective config: ${spec.steps} steps x ${spec.batch_size} rollouts per arm, ${ctx.data.test.length} eval items, ${ctx.data.source}`);
  return config;
}
