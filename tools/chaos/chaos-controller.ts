// The controller of a chaos run (the test as controller, as in apps/pipeline-e2e): a short experiment of both
// arms through the four pipeline services, resumable at any point, since the chaos tool SIGKILLs it too.
//   shared init   one saveState both arms start from (progress.json)
//   training      per arm, step N requested on `step-requests` (job id <run>-<arm>-<N>-prepare, so a resumed
//                 controller re-requesting a step adds nothing) once N - 1 is committed; a step is done when the
//                 trainer's ledger has committed it (a step-complete event consumed by a killed predecessor is
//                 not needed); a dead letter of the step stops the run with its reason
//   evaluation    per arm, the state the ledger committed with the last step loaded into a training client,
//                 saved for sampling, greedy-decoded on the eval items by apps/controller's evaluator:
//                 <out>/<arm>/eval.jsonl, and a hash of the final weights (logprobs of fixed probe sequences)
//   decision      the spec's paired Hoeffding rule over the two eval files (as rx decide): decision.json
//   result        result.json: every committed step record, the final weights, the decision (written last,
//                 once the chaos tool says its faults are all in when it asks to hold)
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'bullmq';
import { rendererFor, type PolicyBackend, type Renderer, type SamplingClient } from '@rx/backend';
import { jobIdFor, QUEUE_CATALOG, type StepRecord } from '@rx/contracts';
import { arithmeticProblems } from '@rx/pipeline/testing';
import { QueueRepository, RedisConnectionFactory, RedisTrainerStepLedger } from '@rx/queue';
import { throughRedisOutages } from '@rx/pipeline';
import { baselineArm, decisionRule, samplingSettings, treatmentArm, type ArmSpec, type ExperimentSpec } from '@rx/spec';
import { decidePairedItems, hoeffdingRecord, type HoeffdingRecord } from '@rx/stats';
import type { Problem } from '@rx/datasets';
import { evaluateItems, type EvalLine } from '@rx/controller';
import { loraFor, stepRequestFor } from '@rx/step-schedule';

export interface ChaosControllerOptions {
  redisUrl: string;
  prefix: string;
  backend: PolicyBackend;
  spec: ExperimentSpec;
  runId: string;
  outDir: string;
  steps: number;
  evalItems: number;
  bandwidth: number;
  concurrency: number;
  stepTimeoutMs: number;
  /** before writing result.json, wait until this file exists (the chaos tool's faults are all in) */
  holdUntilFile?: string;
  log: (event: string, fields?: Record<string, unknown>) => void;
}

export interface ArmResult {
  records: StepRecord[];
  final: { statePath: string; weightsHash: string };
  evalSha256: string;
}

export interface RunResult {
  runId: string;
  steps: number;
  arms: Record<string, ArmResult>;
  decision: HoeffdingRecord;
}

/** training prompts: steps x 64 problems the hash-chain policy can answer; eval items after them */
export function chaosData(steps: number, evalItems: number): { train: Problem[]; test: Problem[] } {
  const toProblem = (p: { promptId: string; question: string; answer: string }): Problem => ({ id: p.promptId, question: p.question, answer: p.answer });
  return { train: arithmeticProblems(steps * 64).map(toProblem), test: arithmeticProblems(evalItems, 50_000).map(toProblem) };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

function writeAtomic(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

function readJson<T>(file: string): T | null {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : null;
}

/** the weights, seen from outside: sha256 of the logprobs of fixed probe sequences (the first 4 items' prompts and answers) under them */
export async function weightsFingerprint(sampling: SamplingClient, renderer: Renderer, items: readonly Problem[]): Promise<string> {
  const logprobs = [];
  for (const it of items.slice(0, 4)) logprobs.push(await sampling.computeLogprobs([...renderer.buildPrompt(it.question), ...renderer.encode(it.answer.split('\n')[0])]));
  return sha256(JSON.stringify(logprobs));
}

export class StepStoppedError extends Error {
  override readonly name = 'StepStoppedError';
}

export async function runChaosController(o: ChaosControllerOptions): Promise<RunResult> {
  const done = readJson<RunResult>(path.join(o.outDir, 'result.json'));
  if (done) return done;
  const connections = new RedisConnectionFactory(o.redisUrl, { connectionName: 'rx-chaos-controller' });
  const queues = new QueueRepository({ connections, prefix: o.prefix });
  const ledger = new RedisTrainerStepLedger(connections.producer(), o.prefix);
  const events = new Set<string>();
  // consumes step-events (validated as the real controller does); the ledger stays the source of truth
  const worker = new Worker(
    'step-events',
    async (job) => {
      const e = QUEUE_CATALOG['step-events'].schema.parse(job.data);
      if (e.kind === 'step-complete') events.add(`${e.runId}/${e.arm}/${e.step}`);
    },
    { connection: connections.worker(), prefix: o.prefix, concurrency: 4 },
  );
  worker.on('error', () => undefined);
  try {
    await connections.ready(30_000);
    const data = chaosData(o.steps, o.evalItems);
    const renderer = await rendererFor(o.spec.base_model);
    const initStatePath = await sharedInit(o);
    await Promise.all(o.spec.arms.map((arm) => trainArm(o, arm, data.train, initStatePath, { queues, ledger, events })));
    const arms: Record<string, ArmResult> = {};
    for (const arm of o.spec.arms) arms[arm.name] = await evaluateArm(o, arm, renderer, data.test, ledger);
    const rule = decisionRule(o.spec);
    const file = (a: ArmSpec) => path.join(o.outDir, a.name, 'eval.jsonl');
    const t = treatmentArm(o.spec);
    const b = baselineArm(o.spec);
    const decision = hoeffdingRecord(decidePairedItems({ source: file(t), text: readFileSync(file(t), 'utf8') }, { source: file(b), text: readFileSync(file(b), 'utf8') }, rule));
    writeAtomic(path.join(o.outDir, 'decision.json'), JSON.stringify(decision, null, 1) + '\n');
    if (o.holdUntilFile) {
      o.log('holding', { until: o.holdUntilFile });
      while (!existsSync(o.holdUntilFile)) await new Promise((r) => setTimeout(r, 50));
    }
    const result: RunResult = { runId: o.runId, steps: o.steps, arms, decision };
    writeAtomic(path.join(o.outDir, 'result.json'), JSON.stringify(result) + '\n');
    o.log('done', { runId: o.runId, outcome: decision.outcome });
    return result;
  } finally {
    await worker.close().catch(() => undefined);
    await queues.close();
    await connections.close();
  }
}

async function sharedInit(o: ChaosControllerOptions): Promise<string> {
  const file = path.join(o.outDir, 'progress.json');
  const progress = readJson<{ initStatePath?: string }>(file) ?? {};
  if (progress.initStatePath) return progress.initStatePath;
  const client = await o.backend.createLoraTrainingClient(loraFor(o.spec, o.spec.arms[0]));
  const initStatePath = await client.saveState(`${o.runId}-init`);
  writeAtomic(file, JSON.stringify({ initStatePath }) + '\n');
  o.log('shared-init', { initStatePath });
  return initStatePath;
}

interface TrainDeps {
  queues: QueueRepository;
  ledger: RedisTrainerStepLedger;
  events: Set<string>;
}

async function trainArm(o: ChaosControllerOptions, arm: ArmSpec, train: Problem[], initStatePath: string, d: TrainDeps): Promise<void> {
  const key = { runId: o.runId, arm: arm.name };
  for (let step = 0; step < o.steps; step++) {
    if (await throughRedisOutages(() => d.ledger.record(key, step))) continue; // committed before this controller (re)started
    const req = stepRequestFor({ spec: o.spec, arm, runId: o.runId, step, train, bandwidth: o.bandwidth, initStatePath });
    await throughRedisOutages(() => d.queues.enqueue('step-requests', req, jobIdFor(req, 'prepare')));
    o.log('step-requested', { arm: arm.name, step });
    await waitCommitted(o, d, arm.name, step);
    o.log('step-committed', { arm: arm.name, step, viaEvent: d.events.has(`${o.runId}/${arm.name}/${step}`) });
  }
}

async function waitCommitted(o: ChaosControllerOptions, d: TrainDeps, arm: string, step: number): Promise<void> {
  const key = { runId: o.runId, arm };
  const deadline = Date.now() + o.stepTimeoutMs;
  const jobPrefix = `${o.runId}-${arm}-${step}-`;
  let nextDeadLetterCheck = 0;
  for (;;) {
    if (d.events.has(`${o.runId}/${arm}/${step}`)) return;
    try {
      if ((await d.ledger.status(key)).committed >= step) return;
      if (Date.now() >= nextDeadLetterCheck) {
        nextDeadLetterCheck = Date.now() + 1000;
        const dead = await deadLetterOf(d.queues, jobPrefix);
        if (dead) throw new StepStoppedError(`step ${step} of ${o.runId}/${arm} was dead-lettered: ${dead}`);
      }
    } catch (err) {
      if (err instanceof StepStoppedError) throw err;
      // Redis away for a moment (a restart): try again
    }
    if (Date.now() > deadline) throw new StepStoppedError(`step ${step} of ${o.runId}/${arm} did not commit within ${o.stepTimeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function deadLetterOf(queues: QueueRepository, jobPrefix: string): Promise<string | null> {
  const jobs = await queues.queue('dead-letters').getJobs(['waiting', 'completed', 'failed', 'delayed'], 0, 500);
  for (const job of jobs) {
    const data = job?.data as { sourceJobId?: string | null; sourceQueue?: string; error?: string } | undefined;
    if (data?.sourceJobId?.startsWith(jobPrefix)) return `${data.sourceQueue}: ${data.error}`;
  }
  return null;
}

async function evaluateArm(o: ChaosControllerOptions, arm: ArmSpec, renderer: Renderer, items: Problem[], ledger: RedisTrainerStepLedger): Promise<ArmResult> {
  const key = { runId: o.runId, arm: arm.name };
  const records: StepRecord[] = [];
  for (let s = 0; s < o.steps; s++) {
    const r = await throughRedisOutages(() => ledger.record(key, s));
    if (!r) throw new StepStoppedError(`step ${s} of ${o.runId}/${arm.name} has no committed record`);
    records.push(r);
  }
  const statePath = await throughRedisOutages(() => ledger.statePath(key, o.steps - 1));
  if (!statePath) throw new StepStoppedError(`the last step of ${o.runId}/${arm.name} has no saved state`);
  const evalFile = path.join(o.outDir, arm.name, 'eval.jsonl');
  const finalFile = path.join(o.outDir, arm.name, 'final.json');
  let final = readJson<ArmResult['final']>(finalFile);
  if (!final || !existsSync(evalFile)) {
    const client = await o.backend.createLoraTrainingClient(loraFor(o.spec, arm));
    await client.loadState(statePath);
    const samplerPath = await client.saveWeightsForSampler(`${o.runId}-${arm.name}-final`);
    const sampling = await o.backend.createSamplingClient(samplerPath);
    const sampling_ = samplingSettings(o.spec);
    const lines: EvalLine[] = await evaluateItems({
      client: sampling,
      renderer,
      items,
      decoding: { temperature: 0, max_tokens: sampling_.maxTokens, max_seq_len: o.spec.max_seq_len, stop_tokens: [...renderer.stopTokens], seed: 0 },
      concurrency: o.concurrency,
      done: new Map(),
      onLine: () => undefined,
    });
    final = { statePath, weightsHash: await weightsFingerprint(sampling, renderer, items) };
    writeAtomic(evalFile, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    writeAtomic(finalFile, JSON.stringify(final) + '\n');
    o.log('evaluated', { arm: arm.name, items: lines.length, correct: lines.filter((l) => l.correct).length });
  }
  return { records, final, evalSha256: sha256(readFileSync(evalFile, 'utf8')) };
}
