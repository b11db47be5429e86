// Where the advantage service keeps each arm's RolloutWindow between steps. The window is stored per step
// ("the window after step N"), so computing step N always starts from the window after N-1: a redelivered
// advantage job sees the same window as the first delivery, and a rollout is never appended twice.
import type { ArmName, RunId } from '@rx/contracts';
import { emptyWindow, type RolloutWindow } from '@rx/estimators';

export interface WindowKey {
  runId: RunId;
  arm: ArmName;
}

export interface RolloutWindowStore {
  /** the window after step - 1 (an empty window of `capacity` for step 0) */
  windowBefore(key: WindowKey, step: number, capacity: number): Promise<RolloutWindow>;
  /** stores the window after `step` unless one is stored already (first writer wins); returns the stored one */
  commitAfter(key: WindowKey, step: number, window: RolloutWindow): Promise<RolloutWindow>;
  /** the newest stored window and its step */
  latest(key: WindowKey): Promise<{ step: number; window: RolloutWindow } | null>;
}

export class WindowGapError extends Error {
  constructor(key: WindowKey, step: number) {
    super(`no window stored after step ${step - 1} of ${key.runId}/${key.arm}: step ${step} cannot be computed before step ${step - 1}`);
    this.name = 'WindowGapError';
  }
}

/** The same contract in memory (the in-process loop, unit tests). */
export class InMemoryRolloutWindowStore implements RolloutWindowStore {
  private readonly windows = new Map<string, Map<number, RolloutWindow>>();

  private of(key: WindowKey): Map<number, RolloutWindow> {
    const k = `${key.runId}\u0000${key.arm}`;
    let m = this.windows.get(k);
    if (!m) this.windows.set(k, (m = new Map()));
    return m;
  }

  async windowBefore(key: WindowKey, step: number, capacity: number): Promise<RolloutWindow> {
    if (step === 0) return emptyWindow(capacity);
    const w = this.of(key).get(step - 1);
    if (!w) throw new WindowGapError(key, step);
    return w;
  }

  async commitAfter(key: WindowKey, step: number, window: RolloutWindow): Promise<RolloutWindow> {
    const m = this.of(key);
    const existing = m.get(step);
    if (existing) return existing;
    const copy = { capacity: window.capacity, rollouts: window.rollouts.map((r) => ({ ...r, phi: [r.phi[0], r.phi[1]] as const })) };
    m.set(step, copy);
    return copy;
  }

  async latest(key: WindowKey): Promise<{ step: number; window: RolloutWindow } | null> {
    const m = this.of(key);
    if (m.size === 0) return null;
    const step = Math.max(...m.keys());
    return { step, window: m.get(step)! };
  }
}
