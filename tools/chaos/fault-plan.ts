// Which faults a chaos session injects, where, drawn from one logged seed: every target is hit at least once
// over the runs (a seeded round-robin), each run gets a few more at random. A fault names the arm, the step and
// the stage of that step it lands in (while that stage's job is queued or running), and a delay after the job
// shows up; the same seed always gives the same plan. Pure: no I/O.
import { mulberry32 } from '@rx/stats';

export const FAULT_TARGETS = ['sampler', 'grader', 'advantage', 'trainer', 'policy-server', 'controller', 'redis'] as const;
export type FaultTarget = (typeof FAULT_TARGETS)[number];

export const FAULT_STAGES = ['prepare', 'sample', 'grade', 'advantage', 'train'] as const;
export type FaultStage = (typeof FAULT_STAGES)[number];

/** the stages a target's fault may land in: a service while it runs its own stage, the rest anywhere mid-step */
export const STAGES_OF: Readonly<Record<FaultTarget, readonly FaultStage[]>> = {
  sampler: ['sample'],
  grader: ['grade'],
  advantage: ['advantage'],
  trainer: ['train', 'prepare'],
  'policy-server': ['sample', 'train', 'prepare'],
  controller: ['prepare', 'sample', 'train'],
  redis: ['sample', 'train', 'advantage'],
};

const FAST_STAGES: readonly FaultStage[] = ['grade', 'advantage'];
const FAST_STAGE_MAX_DELAY_MS = 5;

export interface Fault {
  target: FaultTarget;
  arm: string;
  step: number;
  stage: FaultStage;
  /** after the stage's job is seen, wait this long before the fault */
  delayMs: number;
}

export interface RunPlan {
  /** 1-based: run 0 is the clean run */
  run: number;
  faults: Fault[];
}

export interface PlanOptions {
  seed: number;
  runs: number;
  steps: number;
  arms: readonly string[];
  /** faults per run beyond the coverage round-robin (default 1) */
  extraPerRun?: number;
  maxDelayMs?: number;
}

/** a [0, 1) stream from a 32-bit seed (mulberry32) */
export const seededRandom = mulberry32;

// a Fisher-Yates shuffle driven by `rand`
function shuffled<T>(items: readonly T[], rand: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const pick = <T>(items: readonly T[], rand: () => number): T => items[Math.floor(rand() * items.length)];

export function planFaults(o: PlanOptions): RunPlan[] {
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new RangeError(`runs must be a positive integer, got ${o.runs}`);
  if (!Number.isInteger(o.steps) || o.steps < 1) throw new RangeError(`steps must be a positive integer, got ${o.steps}`);
  if (o.arms.length === 0) throw new RangeError('at least one arm');
  const rand = seededRandom(o.seed);
  const maxDelay = o.maxDelayMs ?? 200;
  const draw = (target: FaultTarget, opts: { stage?: FaultStage; minStep?: number } = {}): Fault => {
    const minStep = Math.min(opts.minStep ?? 0, o.steps - 1);
    const arm = pick(o.arms, rand);
    const step = minStep + Math.floor(rand() * (o.steps - minStep));
    const stage = opts.stage ?? pick(STAGES_OF[target], rand);
    // grading and advantages take milliseconds: a fault there must come at once to land mid-stage
    const delayMs = Math.floor(rand() * ((FAST_STAGES.includes(stage) ? FAST_STAGE_MAX_DELAY_MS : maxDelay) + 1));
    return { target, arm, step, stage, delayMs };
  };
  const plans: RunPlan[] = Array.from({ length: o.runs }, (_, i) => ({ run: i + 1, faults: [] }));
  // coverage: each target once, round-robin over the runs in a seeded order; the trainer's lands mid-train, and
  // the trainer's and the policy server's after step 0 (so the arm is rebuilt from a committed state, not its origin)
  shuffled(FAULT_TARGETS, rand).forEach((target, i) =>
    plans[i % o.runs].faults.push(
      draw(target, { stage: target === 'trainer' ? 'train' : undefined, minStep: target === 'trainer' || target === 'policy-server' ? 1 : 0 }),
    ),
  );
  // extras: any target but Redis (one Redis restart per session is the plan's)
  const extraTargets = FAULT_TARGETS.filter((t) => t !== 'redis');
  for (const plan of plans) for (let k = 0; k < (o.extraPerRun ?? 1); k++) plan.faults.push(draw(pick(extraTargets, rand)));
  const stageOrder = (s: FaultStage) => FAULT_STAGES.indexOf(s);
  for (const plan of plans) plan.faults.sort((a, b) => a.step - b.step || stageOrder(a.stage) - stageOrder(b.stage) || a.delayMs - b.delayMs);
  return plans;
}
