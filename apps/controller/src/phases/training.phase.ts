// Phase 5, both arms concurrently through the services, `steps` steps each, from the shared initial state, the
// kernel arm at the bandwidth the pilot chose. Each completed step is appended to <arm>/steps.jsonl; a finished
// arm writes <arm>/training.json (checkpoints per step, final weights); the phase then writes training.json (the
// bandwidth, each arm's file, the first-update check), which loadTraining reads back with each arm's file.
// After its last step each arm is scored on the run's fixed dev sample every 10 updates (dev-accuracy.ts).
// Resume: an arm that finished is read back. An arm interrupted at step N continues at N when the trainer still
// holds it (the ledger in Redis says N - 1 is committed); otherwise it trains again from the shared initial state
// under a new run id (attempt k + 1). Sampling is seeded per step, so the result is the same either way.
import * as path from 'node:path';
import type { StepRecord } from '@rx/contracts';
import { RedisTrainerStepLedger } from '@rx/queue';
import type { ArmSpec, ExperimentSpec } from '@rx/spec';
import { Redis } from 'ioredis';
import { driveArm } from '../experiment/arm-driver';
import { BudgetExceeded } from '../experiment/budget-guard';
import { throwIfAborted, type ExperimentContext } from '../experiment/experiment-context';
import { rewriteStepLogs } from '../experiment/step-logs';
import { loraFor } from '@rx/step-schedule';
import { StepFailedError } from '../infra/step-bus';
import { sha256Json } from '@rx/run-dir';
import { devAccuracyCurve, devEvalPoints } from './dev-accuracy';
import { initProbeDatums } from './shared-init.phase';
import { adapterHash } from './adapter-hash';
import { unloadQuietly } from './unload-model';
import { readRunFile, readRunFileIfExists, readRunLines, writeRunFile, type ArmTraining, type FinalWeights, type RunDir, type SharedInitResult, type TrainingResult } from '@rx/run-dir';

export async function runTraining(ctx: ExperimentContext, init: SharedInitResult, bandwidth: number): Promise<TrainingResult> {
  const training = ctx.spec.arms.map((arm) => trainArm(ctx, arm, init, bandwidth));
  let arms: ArmTraining[];
  try {
    arms = await Promise.all(training);
  } catch (err) {
    // a budget stop in one arm: the others end the step they are in (admitted, charged, kept for the resume) and stop
    // at their next check; any other failure ends the phase at once
    if (err instanceof BudgetExceeded) await Promise.allSettled(training);
    throw err;
  }
  const byArm = Object.fromEntries(arms.map((a) => [a.arm, a]));
  const first_update_check = await firstUpdateCheck(ctx, byArm);
  const result: TrainingResult = { bandwidth, arms: byArm, first_update_check };
  writeRunFile(ctx.dir, 'training.json', {
    bandwidth,
    first_update_check,
    arms: Object.fromEntries(Object.values(byArm).map((a) => [a.arm, ctx.dir.relative(ctx.dir.trainingFile(a.arm))])),
  });
  return result;
}

/** the training phase's result read back (a resumed run past training): the summary and each arm's training.json */
export function loadTraining(dir: RunDir, spec: ExperimentSpec): TrainingResult {
  const summary = readRunFile(dir, 'training.json');
  if (summary.bandwidth === null) throw new Error(`${dir.trainingSummaryFile} names no bandwidth, yet training completed`);
  const arms = Object.fromEntries(spec.arms.map((a) => [a.name, readRunFile(dir, '<arm>/training.json', dir.trainingFile(a.name))]));
  return { bandwidth: summary.bandwidth, arms, first_update_check: summary.first_update_check };
}

async function trainArm(ctx: ExperimentContext, arm: ArmSpec, init: SharedInitResult, bandwidth: number): Promise<ArmTraining> {
  const done = readRunFileIfExists(ctx.dir, '<arm>/training.json', ctx.dir.trainingFile(arm.name));
  if (done && ctx.state.state.arms[arm.name]?.done) {
    ctx.progress.arm(arm.name, { phase: 'trained', step: done.steps, steps: done.steps, note: '(from an earlier attempt)' });
    return done;
  }
  const started = Date.now();
  const steps = ctx.spec.steps;
  const stepsFile = ctx.dir.stepsFile(arm.name);
  const previous = ctx.state.state.arms[arm.name];
  let attempt = previous?.attempt ?? 1;
  let runId = previous?.runId ?? `${ctx.manifest.runId}.t${attempt}`;
  let records = readRunLines(ctx.dir, '<arm>/steps.jsonl', stepsFile).filter((r) => r.runId === runId);
  records = records.filter((r, i) => r.step === i); // a contiguous prefix 0..N-1

  if (previous) {
    // a resumed arm: continue where the trainer's ledger is, when it still has this attempt
    const caughtUp = await catchUpFromLedger(ctx, runId, arm.name, records);
    if (caughtUp === null) {
      ctx.progress.info(`${arm.name}: the trainer no longer holds attempt ${attempt} (${records.length} steps logged); training again from the shared initial state`);
      ({ attempt, runId, records } = restart(ctx, arm, attempt));
    } else {
      records = caughtUp;
      if (records.length > 0) ctx.progress.info(`${arm.name}: continuing attempt ${attempt} at step ${records.length}`);
    }
  }
  ctx.dir.writeLines(stepsFile, records.slice(0, ctx.spec.steps));
  records = records.slice(0, ctx.spec.steps);
  rewriteStepLogs(ctx, stepsFile, records);
  ctx.state.update((s) => void (s.arms[arm.name] = { attempt, runId, stepsDone: records.length, done: false }));

  const drive = (from: number) =>
    driveArm(ctx, {
      arm,
      runId,
      fromStep: from,
      toStep: steps,
      bandwidth,
      initStatePath: init.state_path,
      stepsFile,
      label: 'train',
      onStep: (r) => {
        ctx.state.update((s) => void (s.arms[arm.name] = { attempt, runId, stepsDone: r.step + 1, done: false }));
        ctx.hooks?.afterTrainingStep?.(arm.name, r.step);
      },
    });
  try {
    records.push(...(await drive(records.length)));
  } catch (err) {
    if (!(err instanceof StepFailedError) || records.length === 0 || ctx.signal.aborted) throw err;
    // the first resumed step was refused (the trainer lost the arm's weights): train again from the start
    ctx.progress.info(`${arm.name}: continuing attempt ${attempt} failed (${err.message}); training again from the shared initial state`);
    ({ attempt, runId, records } = restart(ctx, arm, attempt));
    rewriteStepLogs(ctx, stepsFile, records);
    ctx.state.update((s) => void (s.arms[arm.name] = { attempt, runId, stepsDone: 0, done: false }));
    records.push(...(await drive(0)));
  }
  throwIfAborted(ctx.signal);
  const final = await finalWeights(ctx, arm, runId, records);
  const states = await withLedger(ctx, (ledger) => Promise.all(records.map((r) => ledger.statePath({ runId, arm: arm.name }, r.step))));
  const dev_accuracy = await devAccuracyCurve(ctx, arm.name, devEvalPoints(records.map((r) => ({ step: r.step, sampler_path: r.samplerPath })), final.sampler_path, records.length));
  const training: ArmTraining = {
    arm: arm.name,
    run_id: runId,
    attempt,
    steps: records.length,
    bandwidth: arm.advantage === 'kernel_cross_prompt_baseline' ? bandwidth : null,
    checkpoints: records.map((r, i) => ({
      step: r.step,
      sampler_path: r.samplerPath,
      state_path: states[i],
      committed_at: r.committedAt,
      loss: r.loss,
      reward_mean: r.gate.rewardMean,
    })),
    final,
    dev_accuracy,
    wall_seconds: (Date.now() - started) / 1000,
  };
  writeRunFile(ctx.dir, '<arm>/training.json', training, ctx.dir.trainingFile(arm.name));
  ctx.state.update((s) => void (s.arms[arm.name] = { attempt, runId, stepsDone: records.length, done: true }));
  ctx.progress.arm(arm.name, { phase: 'trained', step: records.length, steps, reward: records[records.length - 1]?.gate.rewardMean });
  return training;
}

function restart(ctx: ExperimentContext, arm: ArmSpec, attempt: number): { attempt: number; runId: string; records: StepRecord[] } {
  const stepsFile = ctx.dir.stepsFile(arm.name);
  if (ctx.dir.exists(stepsFile)) ctx.dir.move(stepsFile, path.join(ctx.dir.armDir(arm.name), `steps.attempt-${attempt}.jsonl`));
  const next = attempt + 1;
  return { attempt: next, runId: `${ctx.manifest.runId}.t${next}`, records: [] };
}

/**
 * The arm's records once the trainer's ledger (in Redis) is read: the logged ones plus any step the trainer
 * committed after the controller stopped listening. The trainer rebuilds a lost client from the state it saved
 * with the last commit, and redoes a step left in doubt, so the arm continues there. Null when the ledger no
 * longer knows this attempt as logged (a fresh Redis): the arm must train again.
 */
async function catchUpFromLedger(ctx: ExperimentContext, runId: string, arm: string, logged: StepRecord[]): Promise<StepRecord[] | null> {
  try {
    return await withLedger(ctx, async (ledger) => {
      const key = { runId, arm };
      const status = await ledger.status(key);
      if (status.committed < logged.length - 1) return null;
      const records = [...logged];
      for (let s = logged.length; s <= status.committed; s++) {
        const r = await ledger.record(key, s);
        if (!r) return null;
        records.push(r);
      }
      return records;
    });
  } catch {
    return null;
  }
}

/**
 * The weights after the arm's last step, as sampler weights for the evaluation: the trainer saves the training
 * state with every commit (its ledger names it); a client here loads the last one and saves it for sampling.
 */
async function finalWeights(ctx: ExperimentContext, arm: ArmSpec, runId: string, records: StepRecord[]): Promise<FinalWeights> {
  const last = records[records.length - 1];
  if (!last) throw new Error(`${arm.name} has no trained step: no final weights`);
  const statePath = await withLedger(ctx, (ledger) => ledger.statePath({ runId, arm: arm.name }, last.step));
  if (!statePath) throw new Error(`the trainer's ledger names no saved state for step ${last.step} of ${runId}/${arm.name}: no final weights`);
  const client = await ctx.backend.createLoraTrainingClient(loraFor(ctx.spec, arm));
  await client.loadState(statePath);
  const sampler_path = await client.saveWeightsForSampler(`${runId}-${arm.name}-final`);
  const adapter = await adapterHash(ctx.backend, sampler_path);
  // hashed first, as the shared init hashes its state before unloading: a service may tie the archive to the live model
  await unloadQuietly((l) => ctx.progress.warn(l), client, `${arm.name}'s final weights`);
  return { sampler_path, state_path: statePath, note: `the state the trainer saved with step ${last.step}, loaded and saved for sampling`, adapter };
}

/** runs `use` on the trainer's ledger in Redis over a short-lived connection */
async function withLedger<T>(ctx: ExperimentContext, use: (ledger: RedisTrainerStepLedger) => Promise<T>): Promise<T> {
  const redis = new Redis(ctx.bus.redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    return await use(new RedisTrainerStepLedger(redis, ctx.bus.prefix));
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

async function firstUpdateCheck(ctx: ExperimentContext, arms: Record<string, ArmTraining>): Promise<TrainingResult['first_update_check']> {
  const datums = initProbeDatums(ctx).slice(0, 4);
  const out: Record<string, string> = {};
  for (const [name, a] of Object.entries(arms)) {
    const first = a.checkpoints.find((c) => c.step === 0);
    if (!first) return null;
    const client = await ctx.backend.createSamplingClient(first.sampler_path);
    const logprobs = [];
    for (const d of datums) logprobs.push(await client.computeLogprobs([...d.inputTokens, d.targetTokens[d.targetTokens.length - 1]]));
    out[name] = sha256Json(logprobs);
  }
  return { arms: out, identical: new Set(Object.values(out)).size === 1 };
}
