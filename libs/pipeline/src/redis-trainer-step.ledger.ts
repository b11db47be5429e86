// TrainerStepLedger in Redis: each transition is one Lua script, so claim, phase, release and commit are atomic.
// `<prefix>:ledger:<run>:<arm>` (hash: committed, claimStep, claimToken, claimPhase, claimSince) and
// `<prefix>:ledger:<run>:<arm>:records` (hash: step -> StepRecord JSON).
import type { Redis } from 'ioredis';
import { stepRecordSchema, type StepRecord } from '@rx/contracts';
import {
  LostClaimError,
  type ClaimResult,
  type LedgerKey,
  type LedgerPhase,
  type LedgerStatus,
  type TrainerStepLedger,
} from './trainer-step.ledger';

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

// ARGV: step, token, record json
const COMMIT = `${HOLDS}
if not holds() then return 0 end
redis.call('HSET', KEYS[1], 'committed', ARGV[1])
redis.call('HDEL', KEYS[1], 'claimStep', 'claimToken', 'claimPhase', 'claimSince')
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
`;

export class RedisTrainerStepLedger implements TrainerStepLedger {
  constructor(private readonly redis: Redis, private readonly prefix: string) {}

  private keys(key: LedgerKey): [string, string] {
    const base = `${this.prefix}:ledger:${key.runId}:${key.arm}`;
    return [base, `${base}:records`];
  }

  async status(key: LedgerKey): Promise<LedgerStatus> {
    const h = await this.redis.hgetall(this.keys(key)[0]);
    return {
      committed: h.committed === undefined ? -1 : Number(h.committed),
      claim: h.claimToken
        ? { step: Number(h.claimStep), token: h.claimToken, phase: h.claimPhase as LedgerPhase, since: h.claimSince }
        : null,
    };
  }

  async claim(key: LedgerKey, step: number, token: string, now: Date): Promise<ClaimResult> {
    const r = (await this.redis.eval(CLAIM, 2, ...this.keys(key), String(step), token, now.toISOString())) as string[];
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

  async markPhase(key: LedgerKey, step: number, token: string, phase: LedgerPhase): Promise<void> {
    const ok = await this.redis.eval(MARK, 2, ...this.keys(key), String(step), token, phase);
    if (ok !== 1) throw new LostClaimError(key, step, `mark ${phase}`);
  }

  async release(key: LedgerKey, step: number, token: string): Promise<void> {
    const ok = await this.redis.eval(RELEASE, 2, ...this.keys(key), String(step), token);
    if (ok !== 1) throw new LostClaimError(key, step, 'release');
  }

  async commit(key: LedgerKey, step: number, token: string, record: StepRecord): Promise<void> {
    const ok = await this.redis.eval(COMMIT, 2, ...this.keys(key), String(step), token, JSON.stringify(stepRecordSchema.parse(record)));
    if (ok !== 1) throw new LostClaimError(key, step, 'commit');
  }

  async record(key: LedgerKey, step: number): Promise<StepRecord | null> {
    const json = await this.redis.hget(this.keys(key)[1], String(step));
    return json === null ? null : stepRecordSchema.parse(JSON.parse(json));
  }
}
