// TrainerStepLedger in Redis: each transition is one Lua script, so claim, take-over, phase, release and commit
// are atomic. `<prefix>:ledger:<run>:<arm>` (hash: committed, statePath, origin, claimStep, claimToken,
// claimPhase, claimSince, takeovers), `<prefix>:ledger:<run>:<arm>:records` (hash: step -> StepRecord JSON) and
// `<prefix>:ledger:<run>:<arm>:states` (hash: step -> the training state saved with that commit).
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { loraSchema, stepRecordSchema, type StepRecord } from '@rx/contracts';
import {
  LostClaimError,
  type ArmOrigin,
  type ClaimResult,
  type LedgerKey,
  type LedgerPhase,
  type LedgerStatus,
  type StepCommit,
  type TrainerStepLedger,
} from '@rx/pipeline';

const originSchema = z.object({ lora: loraSchema, initStatePath: z.string().min(1).nullable() });

// ARGV: step, token, since
const CLAIM = `
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '-1')
local step = tonumber(ARGV[1])
if step <= committed then return {'skipped', tostring(committed), redis.call('HGET', KEYS[2], ARGV[1]) or ''} end
if step ~= committed + 1 then return {'out-of-order', tostring(committed)} end
local held = redis.call('HGET', KEYS[1], 'claimToken')
if held then
  return {'in-doubt', tostring(committed), redis.call('HGET', KEYS[1], 'claimStep'), held,
          redis.call('HGET', KEYS[1], 'claimPhase'), redis.call('HGET', KEYS[1], 'claimSince')}
end
redis.call('HSET', KEYS[1], 'claimStep', ARGV[1], 'claimToken', ARGV[2], 'claimPhase', 'forward_backward', 'claimSince', ARGV[3])
return {'claimed', tostring(committed)}
`;

// ARGV: step, token, held token, since
const TAKE_OVER = `
if redis.call('HGET', KEYS[1], 'claimStep') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'claimToken') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'claimToken', ARGV[2], 'claimPhase', 'forward_backward', 'claimSince', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'takeovers', 1)
return 1
`;

const HOLDS = `
local function holds() return redis.call('HGET', KEYS[1], 'claimToken') == ARGV[2] and redis.call('HGET', KEYS[1], 'claimStep') == ARGV[1] end
`;

// ARGV: step, token, phase
const MARK = `${HOLDS}
if not holds() then return 0 end
redis.call('HSET', KEYS[1], 'claimPhase', ARGV[3])
return 1
`;

// ARGV: step, token
const RELEASE = `${HOLDS}
if not holds() or redis.call('HGET', KEYS[1], 'claimPhase') ~= 'forward_backward' then return 0 end
redis.call('HDEL', KEYS[1], 'claimStep', 'claimToken', 'claimPhase', 'claimSince')
return 1
`;

// KEYS: ledger, records, states; ARGV: step, token, record json, state path
const COMMIT = `${HOLDS}
if not holds() then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[1], 'committed', ARGV[1], 'statePath', ARGV[4])
redis.call('HDEL', KEYS[1], 'claimStep', 'claimToken', 'claimPhase', 'claimSince')
return 1
`;

// ARGV: origin json -> the stored one
const SET_ORIGIN = `
redis.call('HSETNX', KEYS[1], 'origin', ARGV[1])
return redis.call('HGET', KEYS[1], 'origin')
`;

export class RedisTrainerStepLedger implements TrainerStepLedger {
  constructor(private readonly redis: Redis, private readonly prefix: string) {}

  private keys(key: LedgerKey): [string, string, string] {
    const base = `${this.prefix}:ledger:${key.runId}:${key.arm}`;
    return [base, `${base}:records`, `${base}:states`];
  }

  async status(key: LedgerKey): Promise<LedgerStatus> {
    const h = await this.redis.hgetall(this.keys(key)[0]);
    return {
      committed: h.committed === undefined ? -1 : Number(h.committed),
      claim: h.claimToken
        ? { step: Number(h.claimStep), token: h.claimToken, phase: h.claimPhase as LedgerPhase, since: h.claimSince }
        : null,
      statePath: h.statePath ?? null,
    };
  }

  /** how many in-doubt claims were taken over on this arm (recoveries) */
  async takeovers(key: LedgerKey): Promise<number> {
    return Number((await this.redis.hget(this.keys(key)[0], 'takeovers')) ?? 0);
  }

  async claim(key: LedgerKey, step: number, token: string, now: Date): Promise<ClaimResult> {
    const [base, records] = this.keys(key);
    const r = (await this.redis.eval(CLAIM, 2, base, records, String(step), token, now.toISOString())) as string[];
    const committed = Number(r[1]);
    switch (r[0]) {
      case 'skipped':
        return { kind: 'skipped', committed, record: r[2] ? stepRecordSchema.parse(JSON.parse(r[2])) : null };
      case 'out-of-order':
        return { kind: 'out-of-order', committed };
      case 'in-doubt':
        return { kind: 'in-doubt', committed, claim: { step: Number(r[2]), token: r[3], phase: r[4] as LedgerPhase, since: r[5] } };
      default:
        return { kind: 'claimed', committed };
    }
  }

  async takeOver(key: LedgerKey, step: number, token: string, heldToken: string, now: Date): Promise<boolean> {
    return (await this.redis.eval(TAKE_OVER, 1, this.keys(key)[0], String(step), token, heldToken, now.toISOString())) === 1;
  }

  async markPhase(key: LedgerKey, step: number, token: string, phase: LedgerPhase): Promise<void> {
    const ok = await this.redis.eval(MARK, 1, this.keys(key)[0], String(step), token, phase);
    if (ok !== 1) throw new LostClaimError(key, step, `mark ${phase}`);
  }

  async release(key: LedgerKey, step: number, token: string): Promise<void> {
    const ok = await this.redis.eval(RELEASE, 1, this.keys(key)[0], String(step), token);
    if (ok !== 1) throw new LostClaimError(key, step, 'release');
  }

  async commit(key: LedgerKey, step: number, token: string, commit: StepCommit): Promise<void> {
    if (commit.statePath === '') throw new Error(`step ${step} of ${key.runId}/${key.arm}: a commit needs the saved state's path`);
    const record = JSON.stringify(stepRecordSchema.parse(commit.record));
    const ok = await this.redis.eval(COMMIT, 3, ...this.keys(key), String(step), token, record, commit.statePath);
    if (ok !== 1) throw new LostClaimError(key, step, 'commit');
  }

  async record(key: LedgerKey, step: number): Promise<StepRecord | null> {
    const json = await this.redis.hget(this.keys(key)[1], String(step));
    return json === null ? null : stepRecordSchema.parse(JSON.parse(json));
  }

  async statePath(key: LedgerKey, step: number): Promise<string | null> {
    return this.redis.hget(this.keys(key)[2], String(step));
  }

  async setOrigin(key: LedgerKey, origin: ArmOrigin): Promise<ArmOrigin> {
    const stored = (await this.redis.eval(SET_ORIGIN, 1, this.keys(key)[0], JSON.stringify(originSchema.parse(origin)))) as string;
    return originSchema.parse(JSON.parse(stored));
  }

  async origin(key: LedgerKey): Promise<ArmOrigin | null> {
    const json = await this.redis.hget(this.keys(key)[0], 'origin');
    return json === null ? null : originSchema.parse(JSON.parse(json));
  }
}
