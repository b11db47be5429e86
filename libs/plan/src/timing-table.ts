// Seconds per unit of work, by backend, for the wall-time estimate of `rx plan` when no run is given (--from-run
// measures them from a run instead). Each from a measured run, named with its source.

export interface UnitTiming {
  /** one training step of an arm (both arms run side by side), dev scoring excluded */
  stepSeconds: number;
  /** one greedy evaluation item (held-out draws and dev scoring too) */
  evalItemSeconds: number;
  /** setup, effective config, shared initialisation and the correctness preflight together */
  fixedSeconds: number;
  source: string;
}

export const DEFAULT_TIMING: Readonly<Record<'embedded' | 'tinker', UnitTiming>> = {
  // README "The embedded run, as measured" (commit 3b94816, 2 cores): training 190 s for 40 steps with 5 x 128 dev
  // items per arm at 84 s / 3957 eval items = 0.0212 s each: (190 - 640 x 0.0212) / 40 = 4.41 s; setup 6 + init 1 + preflight 13 s
  embedded: { stepSeconds: 4.41, evalItemSeconds: 0.0212, fixedSeconds: 20, source: 'the embedded run measured in README.md (commit 3b94816, 2-core machine)' },
  // the published gs1-vs-grpo record's feasibility measurements (Tinker, Qwen/Qwen3.5-2B): training 74 s for 2 steps,
  // evaluation 26 s for 1319 items, setup 30 s
  tinker: { stepSeconds: 37, evalItemSeconds: 26 / 1319, fixedSeconds: 30, source: "the published gs1-vs-grpo record's feasibility measurements (Tinker, Qwen/Qwen3.5-2B, Nov 2026)" },
};
