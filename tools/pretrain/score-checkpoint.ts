// Scores a base checkpoint the way tools/pretrain/pretrain.ts does at its end: greedy accuracy and temperature-1
// mean reward (cookbook grader) on the arith test items and on the controller's dev split.
//
//   node -r ./tools/register.js tools/pretrain/score-checkpoint.ts [models/char-lm] [--eval 1319]
import { arithDataset, type Problem } from '@rx/datasets';
import { ensureTfWasm, readBaseCheckpoint, type ParamSet } from '@rx/embedded-model';
import { arithDevProblems, scoreBaseParams } from './arith-eval';

async function score(params: ParamSet, problems: Problem[]): Promise<string> {
  const e = await scoreBaseParams(params, problems);
  return `greedy accuracy ${e.greedyAccuracy.toFixed(4)} (format ${e.greedyFormatOk.toFixed(2)}), T=1 mean reward ${e.sampledReward.toFixed(4)}`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const evalAt = args.indexOf('--eval');
  const nTest = evalAt >= 0 ? Number(args[evalAt + 1]) : 1319;
  const dir = args.find((a, i) => !a.startsWith('--') && (evalAt < 0 || i !== evalAt + 1)) ?? 'models/char-lm';
  if (!Number.isInteger(nTest) || nTest <= 0) throw new Error(`--eval needs a positive item count, got ${args[evalAt + 1]}`);
  await ensureTfWasm();
  const checkpoint = readBaseCheckpoint(dir);
  const test = arithDataset({ split: 'test', seed: 0 }).slice(0, nTest);
  const dev = arithDevProblems();
  console.log(`${dir} (sha256 ${checkpoint.sha256.slice(0, 12)})`);
  console.log(`  ${test.length} test: ${await score(checkpoint.params, test)}`);
  console.log(`  ${dev.length} dev: ${await score(checkpoint.params, dev)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
