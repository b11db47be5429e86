// RolloutWindowStore in Redis: `<prefix>:window:<run>:<arm>:<step>` holds the window after that step (JSON,
// written once: SET NX), `<prefix>:window:<run>:<arm>:latest` the newest step. Survives service restarts.
import type { Redis } from 'ioredis';
import { emptyWindow, type RolloutWindow, type ScoredRollout } from '@rx/estimators';
import { WindowGapError, type RolloutWindowStore, type WindowKey } from '@rx/pipeline';

// KEYS[1] window key, KEYS[2] latest key; ARGV[1] json, ARGV[2] step, ARGV[3] ttl seconds -> the stored json
const COMMIT = `
local stored = redis.call('GET', KEYS[1])
if stored then return stored end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[3]))
local latest = tonumber(redis.call('GET', KEYS[2]) or '-1')
if tonumber(ARGV[2]) > latest then redis.call('SET', KEYS[2], ARGV[2], 'EX', tonumber(ARGV[3])) end
return ARGV[1]
`;

interface StoredWindow {
  capacity: number;
  rollouts: Array<{ rolloutId: string; step: number; promptId: string; reward: number; phi: [number, number] }>;
}

function toWindow(json: string): RolloutWindow {
  const w = JSON.parse(json) as StoredWindow;
  const base = emptyWindow(w.capacity);
  const rollouts: ScoredRollout[] = w.rollouts.map((r) => ({ rolloutId: r.rolloutId, step: r.step, promptId: r.promptId, reward: r.reward, phi: [r.phi[0], r.phi[1]] as const }));
  return Object.freeze({ capacity: base.capacity, rollouts: Object.freeze(rollouts) });
}

function toJson(window: RolloutWindow): string {
  const w: StoredWindow = {
    capacity: window.capacity,
    rollouts: window.rollouts.map((r) => ({ rolloutId: r.rolloutId, step: r.step, promptId: r.promptId, reward: r.reward, phi: [r.phi[0], r.phi[1]] })),
  };
  return JSON.stringify(w);
}

export class RedisRolloutWindowStore implements RolloutWindowStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** how long a stored window lives (default 30 days) */
    private readonly ttlSeconds = 30 * 24 * 3600,
  ) {}

  private key(key: WindowKey, step: number | 'latest'): string {
    return `${this.prefix}:window:${key.runId}:${key.arm}:${step}`;
  }

  async windowBefore(key: WindowKey, step: number, capacity: number): Promise<RolloutWindow> {
    if (step === 0) return emptyWindow(capacity);
    const json = await this.redis.get(this.key(key, step - 1));
    if (json === null) throw new WindowGapError(key, step);
    return toWindow(json);
  }

  async commitAfter(key: WindowKey, step: number, window: RolloutWindow): Promise<RolloutWindow> {
    const stored = (await this.redis.eval(COMMIT, 2, this.key(key, step), this.key(key, 'latest'), toJson(window), String(step), String(this.ttlSeconds))) as string;
    return toWindow(stored);
  }

  async latest(key: WindowKey): Promise<{ step: number; window: RolloutWindow } | null> {
    const step = await this.redis.get(this.key(key, 'latest'));
    if (step === null) return null;
    const json = await this.redis.get(this.key(key, Number(step)));
    return json === null ? null : { step: Number(step), window: toWindow(json) };
  }
}
