// Phase 6: greedy evaluation of every test item for the base model (the LoRA at the shared initial state) and
// each arm's final weights: <dir>/<model>/eval.jsonl, one line per item (item_id, correct, extracted answer,
// completion). The evaluator id names what decided correctness: sha256 over the evaluator's code, the prompt
// template, the decoding settings and the item manifest.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { evalSettings } from '@rx/spec';
import { throwIfAborted, type ExperimentContext } from '../../experiment/experiment-context';
import { REPO_ROOT } from '../../infra/repo-root';
import { sha256Hex, sha256Json } from '@rx/run-dir';
import { BASE_EVAL_NAME, readRunFileIfExists, writeRunFile, type DecodingSettings, type EvalLine, type EvaluationResult, type EvaluatorIdentity, type ModelEvaluation, type SharedInitResult, type TrainingResult } from '@rx/run-dir';
import { evaluateItems } from './evaluator';

/** the evaluator's own source and the grading library it calls, relative to the repository root */
export function evaluatorCodeFiles(): string[] {
  const grading = path.join('libs', 'grading', 'src');
  const files = readdirSync(path.join(REPO_ROOT, grading))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
    .map((f) => path.join(grading, f));
  return [path.join('apps', 'controller', 'src', 'phases', 'evaluation', 'evaluator.ts'), ...files].sort();
}

export function evaluatorIdentity(ctx: ExperimentContext): EvaluatorIdentity & { id: string } {
  const settings = evalSettings(ctx.spec);
  const code = Object.fromEntries(evaluatorCodeFiles().map((f) => [f, sha256Hex(readFileSync(path.join(REPO_ROOT, f)))]));
  const decoding: DecodingSettings = {
    temperature: 0,
    max_tokens: settings.maxTokens,
    max_seq_len: ctx.spec.max_seq_len,
    stop_tokens: [...ctx.renderer.stopTokens],
    seed: 0,
  };
  const prompt_template = { renderer: ctx.renderer.name, example: ctx.renderer.decode(ctx.renderer.buildPrompt('{question}')) };
  const parts = { code, prompt_template, decoding, item_manifest_sha256: ctx.data.testManifestSha256, items: ctx.data.test.length };
  // evaluator id = sha256(canonical JSON of {code file hashes, prompt template, decoding settings, item manifest hash})
  return { ...parts, id: sha256Json(parts) };
}

export async function runEvaluation(ctx: ExperimentContext, init: SharedInitResult, training: TrainingResult): Promise<EvaluationResult> {
  const identity = evaluatorIdentity(ctx);
  const { id: evaluator_id, ...evaluator } = identity;
  const models: Array<{ model: string; samplerPath: string }> = [
    { model: BASE_EVAL_NAME, samplerPath: init.sampler_path },
    ...ctx.spec.arms.map((a) => ({ model: a.name, samplerPath: training.arms[a.name].final.sampler_path })),
  ];
  const previous = readRunFileIfExists(ctx.dir, 'evaluation.json');
  const result: EvaluationResult = { evaluator_id, evaluator, models: previous?.evaluator_id === evaluator_id ? previous.models : {} };
  let lastSeconds = 0;
  for (const m of models) {
    throwIfAborted(ctx.signal);
    const finished = result.models[m.model];
    if (finished && finished.sampler_path === m.samplerPath && ctx.dir.exists(ctx.dir.evalFile(m.model))) {
      ctx.progress.info(`evaluation of ${m.model}: done earlier (accuracy ${finished.accuracy.toFixed(4)})`);
      lastSeconds = finished.wall_seconds;
      continue;
    }
    // one model's evaluation is the unit: estimated as long as the last one took
    ctx.budget?.check(`the evaluation of ${m.model}`, lastSeconds, 'evaluation', ctx.budget.evaluationTokens());
    result.models[m.model] = await evaluateModel(ctx, m.model, m.samplerPath, evaluator.decoding);
    lastSeconds = result.models[m.model].wall_seconds;
    writeRunFile(ctx.dir, 'evaluation.json', result);
  }
  writeRunFile(ctx.dir, 'evaluation.json', result);
  return result;
}

async function evaluateModel(ctx: ExperimentContext, model: string, samplerPath: string, decoding: DecodingSettings): Promise<ModelEvaluation> {
  const started = Date.now();
  const partial = ctx.dir.partialEvalFile(model);
  // a partial file from an interrupted attempt counts only if it was made from the same weights
  const header = ctx.dir.readLines<{ sampler_path?: string }>(partial)[0];
  if (header && header.sampler_path !== samplerPath) ctx.dir.remove(partial);
  if (!ctx.dir.exists(partial)) ctx.dir.appendLine(partial, { sampler_path: samplerPath });
  const done = new Map(
    ctx.dir
      .readLines<EvalLine>(partial)
      .slice(1)
      .map((l) => [l.item_id, l] as const),
  );
  const client = await ctx.backend.createSamplingClient(samplerPath);
  const total = ctx.data.test.length;
  let finished = done.size;
  const lines = await evaluateItems({
    client,
    renderer: ctx.renderer,
    items: ctx.data.test,
    decoding,
    concurrency: ctx.concurrency,
    done,
    signal: ctx.signal,
    onLine: (line) => {
      ctx.dir.appendLine(partial, line);
      finished++;
      if (finished % 16 === 0 || finished === total) {
        const rate = (Date.now() - started) / 1000 / Math.max(1, finished - done.size);
        ctx.progress.arm(model, { phase: 'eval', unit: 'item', step: finished, steps: total, etaSeconds: rate * (total - finished) });
      }
    },
  });
  const file = ctx.dir.evalFile(model);
  ctx.dir.writeLines(file, lines);
  ctx.dir.remove(partial);
  const correct = lines.filter((l) => l.correct).length;
  const evaluation: ModelEvaluation = {
    model,
    sampler_path: samplerPath,
    file: ctx.dir.relative(file),
    sha256: sha256Hex(ctx.dir.readText(file)),
    n: lines.length,
    correct,
    accuracy: correct / lines.length,
    format_ok_fraction: lines.filter((l) => l.format_ok).length / lines.length,
    wall_seconds: (Date.now() - started) / 1000,
  };
  ctx.progress.arm(model, { phase: 'evaluated', unit: 'item', step: total, steps: total, note: `accuracy ${evaluation.accuracy.toFixed(4)} (${correct}/${lines.length})` });
  return evaluation;
}
