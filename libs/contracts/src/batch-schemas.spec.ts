import { deadLetterSchema } from './dead-letter.schema';
import { MAX_BATCH_ENTRIES, MAX_SEQUENCE_TOKENS } from './prompt.schema';
import { QUEUE_CATALOG } from './queue-catalog';
import { stepRecordSchema } from './step-record.schema';
import { fixtureTrainStep } from '@rx/contracts/testing';

const schema = QUEUE_CATALOG['train-steps'].schema;

function issuesOf(payload: unknown): string[] {
  const r = schema.safeParse(payload);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('batch payload schemas', () => {
  const good = () => fixtureTrainStep({ prompts: 8, groupSize: 8, promptTokens: 5, completionTokens: 4 });

  it('accept a complete batch', () => {
    expect(issuesOf(good())).toEqual([]);
  });

  it('refuse a batch short of prompts x group size rollouts', () => {
    const p = good();
    p.rollouts.pop();
    expect(issuesOf(p).join('\n')).toMatch(/rollouts: expected 64 rollouts \(8 prompts x group size 8\), got 63/);
  });

  it('refuse duplicate rollout ids, unknown prompts and token/logprob length mismatch, naming the path', () => {
    const p = good();
    p.rollouts[1].rolloutId = p.rollouts[0].rolloutId;
    p.rollouts[2].promptId = 'nope';
    p.rollouts[3].logprobs.pop();
    const issues = issuesOf(p).join('\n');
    expect(issues).toMatch(/rollouts\.1\.rolloutId: duplicate rollout '7-0'/);
    expect(issues).toMatch(/rollouts\.2\.promptId: unknown prompt 'nope'/);
    expect(issues).toMatch(/rollouts\.3\.logprobs: 4 tokens but 3 logprobs/);
  });

  it('refuse non-integer tokens, a NaN advantage and an arm name with "-"', () => {
    const p = good() as unknown as { arm: string; rollouts: Array<{ tokens: number[]; advantage: number }> };
    p.arm = 'gs1-kernel';
    p.rollouts[0].tokens[0] = 1.5;
    p.rollouts[0].advantage = Number.NaN;
    const issues = issuesOf(p).join('\n');
    expect(issues).toMatch(/^arm: an arm name/m);
    expect(issues).toMatch(/rollouts\.0\.tokens\.0: Expected integer/);
    expect(issues).toMatch(/rollouts\.0\.advantage: Expected number, received nan/);
  });

  it('every schema of the catalog rejects an empty object with path-named issues', () => {
    for (const spec of Object.values(QUEUE_CATALOG)) {
      const r = spec.schema.safeParse({});
      expect(r.success).toBe(false);
      if (!r.success) expect(r.error.issues.every((i) => i.path.length > 0)).toBe(true);
    }
  });
});

describe('bounded payloads', () => {
  it('refuse a token or logprob array past MAX_SEQUENCE_TOKENS and a step record past MAX_BATCH_ENTRIES rollouts', () => {
    const p = fixtureTrainStep({ prompts: 1, groupSize: 1, promptTokens: 3, completionTokens: 2 });
    p.rollouts[0].tokens = new Array(MAX_SEQUENCE_TOKENS).fill(1);
    p.rollouts[0].logprobs = new Array(MAX_SEQUENCE_TOKENS).fill(-1);
    expect(issuesOf(p)).toEqual([]);
    p.rollouts[0].tokens.push(1);
    p.rollouts[0].logprobs.push(-1);
    expect(issuesOf(p)).toEqual([
      `rollouts.0.tokens: Array must contain at most ${MAX_SEQUENCE_TOKENS} element(s)`,
      `rollouts.0.logprobs: Array must contain at most ${MAX_SEQUENCE_TOKENS} element(s)`,
    ]);
    const rolloutsPath = stepRecordSchema.shape.rollouts.safeParse(new Array(MAX_BATCH_ENTRIES + 1).fill({}));
    expect(rolloutsPath.success ? [] : rolloutsPath.error.issues.map((i) => i.message)).toContain(`Array must contain at most ${MAX_BATCH_ENTRIES} element(s)`);
  });

  it('quote ids and enum values in issues on one line and at most 64 characters, so a dead letter can carry them', () => {
    const p = fixtureTrainStep({ prompts: 2, groupSize: 2, promptTokens: 3, completionTokens: 2 }) as unknown as { rollouts: Array<{ promptId: string; stopReason: string }> };
    p.rollouts[0].promptId = `a\n${'b'.repeat(120)}`;
    const q = fixtureTrainStep({ prompts: 2, groupSize: 2, promptTokens: 3, completionTokens: 2 }) as unknown as { rollouts: Array<{ promptId: string; stopReason: string }> };
    q.rollouts[1].stopReason = `x\n${'y'.repeat(1 << 20)}`;
    const issues = [...issuesOf(p), ...issuesOf(q)];
    expect(issues).toContain(`rollouts.0.promptId: unknown prompt 'a\\n${'b'.repeat(61)}…'`);
    expect(issues).toContain(`rollouts.1.stopReason: Invalid enum value. Expected 'stop' | 'length', received 'x\\n${'y'.repeat(61)}…'`);
    const letter = { sourceQueue: 'train-steps', sourceJobId: 'r-a-0-train', reason: 'invalid-payload', error: issues.join('; ').slice(0, 8000), dataPreview: '{}', receivedAt: '2026-08-01T12:00:00.000Z' };
    const parsed = deadLetterSchema.safeParse({ ...letter, issues: issues.map((i) => ({ path: i.slice(0, i.indexOf(':')), message: i.slice(i.indexOf(': ') + 2) })) });
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    expect(issues.every((i) => !/[\r\n]/.test(i) && i.length < 200)).toBe(true);
  });
});

describe('no secrets in payloads', () => {
  it('parsing strips fields the schemas do not name, so a stray credential never reaches Redis', () => {
    const p = { ...fixtureTrainStep({ prompts: 1, groupSize: 1, promptTokens: 3, completionTokens: 2 }), apiKey: 'tml-secret', env: { TINKER_API_KEY: 'tml-secret' } };
    const parsed = schema.parse(p);
    expect(JSON.stringify(parsed)).not.toContain('tml-secret');
  });

  it('no schema field is named like a credential', () => {
    const names = new Set<string>();
    const walk = (s: unknown): void => {
      const def = (s as { _def?: Record<string, unknown> })._def;
      if (!def) return;
      const shape = typeof def.shape === 'function' ? (def.shape as () => Record<string, unknown>)() : undefined;
      if (shape) for (const [k, v] of Object.entries(shape)) { names.add(k); walk(v); }
      for (const key of ['schema', 'innerType', 'type', 'left', 'right']) if (def[key]) walk(def[key]);
      for (const key of ['options', 'items']) if (Array.isArray(def[key])) (def[key] as unknown[]).forEach(walk);
    };
    for (const spec of Object.values(QUEUE_CATALOG)) walk(spec.schema);
    expect(names.size).toBeGreaterThan(40);
    expect([...names].filter((n) => /key|secret|password|credential|auth/i.test(n) && n !== 'key')).toEqual([]);
  });
});
