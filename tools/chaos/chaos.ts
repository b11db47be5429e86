// The chaos test: short experiments of both arms through the real services, with SIGKILLs of the sampler,
// grader, advantage, trainer, policy server and controller and a Redis restart injected at random points
// drawn from a logged seed, each followed by a restart; every run must complete and match the clean run.
//
//   node -r ./tools/register.js tools/chaos/chaos.ts [--runs 3] [--seed N] [--steps 2] [--eval 16] [--extra 1]
//        [--model hash-chain|embedded] [--base <checkpoint dir>] [--latency-ms 25] [--controller-kills 2]
//        [--out <dir>] [--keep]
//
// Then the real controller: `rx run` on the embedded model, SIGKILLed --controller-kills times at seeded points and
// resumed with `rx run --resume`, against a clean `rx run` (controller-resume.ts; --controller-kills 0 skips it).
//
// Exit 0: every run completed, every fault recovered, every run identical, no secret printed; 1 otherwise;
// 2 for a bad flag. The work directory (logs, data, Redis AOF) is removed on success unless --keep.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { formatReport, runChaosSession } from './chaos-session';
import { formatControllerResume, runControllerResume } from './controller-resume';
import { REPO_ROOT } from './service-process';

const USAGE =
  'usage: chaos.ts [--runs N] [--seed N] [--steps N] [--eval N] [--extra N] [--model hash-chain|embedded] [--base <dir>] [--latency-ms N] [--controller-kills N] [--spawned-kills] [--out <dir>] [--keep]';

const int = (name: string, min: number, max: number) =>
  z.coerce.number({ invalid_type_error: `--${name} must be a number` }).int(`--${name} must be an integer`).min(min, `--${name} must be at least ${min}`).max(max, `--${name} must be at most ${max}`);

const argsSchema = z
  .object({
    runs: int('runs', 1, 100).default(3),
    seed: int('seed', 0, 2 ** 31 - 1).default(() => Math.floor(Math.random() * 2 ** 31)),
    steps: int('steps', 1, 20).default(2),
    eval: int('eval', 1, 1319).default(16),
    extra: int('extra', 0, 10).default(1),
    model: z.enum(['hash-chain', 'embedded'], { errorMap: () => ({ message: '--model must be hash-chain or embedded' }) }).default('hash-chain'),
    base: z.string().min(1).optional(),
    'latency-ms': int('latency-ms', 0, 10_000).default(25),
    'controller-kills': int('controller-kills', 0, 10).default(2),
    'spawned-kills': z.boolean().default(false),
    out: z.string().min(1).optional(),
    keep: z.boolean().default(false),
  })
  .refine((a) => (a.model !== 'embedded' && a['controller-kills'] === 0) || a.base !== undefined || existsSync(path.join(REPO_ROOT, 'models', 'char-lm', 'model.json')), {
    message: '--model embedded and the controller chaos need a base checkpoint: --base <dir> (models/char-lm is not there), or --controller-kills 0',
  });

async function main(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        runs: { type: 'string' },
        seed: { type: 'string' },
        steps: { type: 'string' },
        eval: { type: 'string' },
        extra: { type: 'string' },
        model: { type: 'string' },
        base: { type: 'string' },
        'latency-ms': { type: 'string' },
        'controller-kills': { type: 'string' },
        'spawned-kills': { type: 'boolean' },
        out: { type: 'string' },
        keep: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    process.stderr.write(`chaos: ${(err as Error).message.split('\n')[0]}; ${USAGE}\n`);
    return 2;
  }
  const parsed = argsSchema.safeParse(values);
  if (!parsed.success) {
    process.stderr.write(`chaos: ${parsed.error.issues.map((i) => i.message).join('; ')}; ${USAGE}\n`);
    return 2;
  }
  const a = parsed.data;
  const dir = path.resolve(a.out ?? path.join(REPO_ROOT, 'tmp', `chaos-${a.seed}-${Date.now().toString(36)}`));
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    process.stderr.write(`chaos: --out ${dir} is not empty: choose a new directory (a chaos session starts from nothing)\n`);
    return 2;
  }
  const report = await runChaosSession({
    seed: a.seed,
    runs: a.runs,
    steps: a.steps,
    evalItems: a.eval,
    extraPerRun: a.extra,
    dir,
    model: a.model,
    baseCheckpoint: a.model === 'embedded' ? path.resolve(a.base ?? path.join(REPO_ROOT, 'models', 'char-lm')) : undefined,
    policyLatencyMs: a['latency-ms'],
    arms: ['grpo_gs8', 'gs1_kernel'],
    log: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(`\n${formatReport(report)}\n`);
  let ok = report.ok;
  if (a['controller-kills'] > 0) {
    const ctl = await runControllerResume({
      seed: a.seed,
      kills: a['controller-kills'],
      steps: a.steps,
      evalItems: a.eval,
      dir: path.join(dir, 'controller'),
      baseCheckpoint: path.resolve(a.base ?? path.join(REPO_ROOT, 'models', 'char-lm')),
      spawnedKills: a['spawned-kills'],
      log: (line) => process.stdout.write(`${line}\n`),
    });
    process.stdout.write(`\n${formatControllerResume(ctl)}\n`);
    ok &&= ctl.ok;
  }
  if (ok && !a.keep) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`logs and data kept in ${dir}\n`);
  return ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`chaos: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
