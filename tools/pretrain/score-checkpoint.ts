// Scores a base checkpoint the way tools/pretrain/pretrain.ts does at its end: greedy accuracy and temperature-1
// mean reward (cookbook grader) on the arith test items and on the controller's dev split.
//
//   node -r ./tools/register.js tools/pretrain/score-checkpoint.ts [models/char-lm] [--eval 1319]
import { arithDataset, DEV_SPLIT_SIZE, devSplit, type Problem } from '@rx/datasets';
import { CHAR_LM_CONFIG, disposeTensors, ensureTfWasm, readBaseCheckpoint, sampleBatch, toTensors, type ModelWeights, type ParamSet } from '@rx/embedded-model';
import { scoreArith } from './arith-eval';

async function score(params: ParamSet, problems: Problem[]): Promise<string> {
  const w: ModelWeights = { cfg: CHAR_LM_CONFIG, base: toTensors(params), loraScale: 0, trainBase: true };
  try {
    const greedy = await scoreArith((p, sp) => sampleBatch(w, p, sp), problems, { temperature: 0 });
    const sampled = await scoreArith((p, sp) => sampleBatch(w, p, sp), problems, { temperature: 1, seed: 1 });
    return `greedy accuracy ${greedy.accuracy.toFixed(4)} (format ${greedy.formatOk.toFixed(2)}), T=1 mean reward ${sampled.meanReward.toFixed(4)}`;
  } finally {
    disposeTensors(w.base);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const evalAt = args.indexOf('--eval');
  const nTest = evalAt >= 0 ? Number(args[evalAt + 1]) : 1319;
  const dir = args.find((a, i) => !a.startsWith('--') && (evalAt < 0 || i !== evalAt + 1)) ?? 'models/char-lm';
  if (!Number.isInteger(nTest) || nTest <= 0) throw new Error(`--eval needs a positive item count, got ${args[evalAt + 1]}`);
  await ensureTfWasm();
  const checkpoint = readBaseCheckpoint(dir);
  const train = arithDataset({ split: 'train', seed: 0 });
  const test = arithDataset({ split: 'test', seed: 0 }).slice(0, nTest);
  const dev = devSplit(train, 0, DEV_SPLIT_SIZE, 0);
  console.log(`${dir} (sha256 ${checkpoint.sha256.slice(0, 12)})`);
  console.log(`  ${test.length} test: ${await score(checkpoint.params, test)}`);
  console.log(`  ${dev.length} dev: ${await score(checkpoint.params, dev)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
