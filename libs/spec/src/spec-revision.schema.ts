// A recorded revision of a published spec: which fields changed, from what to what, why, on what evidence (a
// file and its sha256), and when. The spec's command (d) says "any other setting change requires a recorded
// revised spec before execution": this block is that record. The cross-field rule in experiment-spec.schema.ts
// checks that every `to` is what the revised spec says at that path.
import { z } from 'zod';

const text = z.string().min(1, 'must not be empty');
const scalar = z.union([z.number().finite(), z.string(), z.boolean()]);

/** a dotted path into the spec; an array element is named by its `name`, `metric` or `id` (arms.gs1_kernel.lr), or by its index */
const specPath = z.string().regex(/^[A-Za-z0-9_]+(\.[A-Za-z0-9_-]+)*$/, 'must be a dotted path such as optimizer.lr or arms.gs1_kernel.lr');

export const specChangeSchema = z
  .object({ path: specPath, from: scalar, to: scalar })
  .strict()
  .refine((c) => c.from !== c.to, { message: 'from and to are the same: not a change', path: ['to'] });

export const specRevisionSchema = z
  .object({
    number: z.number().int('must be an integer').positive('must be > 0'),
    /** the spec this one revises (a name, a file, a commit) */
    revises: text,
    date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
      .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'is not a calendar date'),
    changes: z.array(specChangeSchema).min(1, 'must list at least one change'),
    why: text,
    evidence: z
      .object({
        /** relative to the repository root */
        file: text.refine((f) => !f.startsWith('/') && !f.split('/').includes('..'), 'must be a path inside the repository'),
        sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits'),
      })
      .strict(),
    /** what the revision leaves as the published spec has it */
    unchanged: z.string().optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const seen = new Map<string, number>();
    r.changes.forEach((c, i) => {
      const first = seen.get(c.path);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['changes', i, 'path'], message: `${c.path} is listed twice (also changes[${first}])` });
      else seen.set(c.path, i);
    });
  });

export type SpecRevision = z.infer<typeof specRevisionSchema>;
export type SpecChange = z.infer<typeof specChangeSchema>;

const ELEMENT_KEYS = ['name', 'metric', 'id'] as const;

/**
 * Where a revision path leads: the value, and the JSON path walked (array elements named by `name`, `metric` or
 * `id` become their index). When it names nothing, `missing` says why: a `key` absent from an object (`at` then
 * ends at that key, the place the spec lacks it), or no array `element` of that name (`at` ends at the array).
 */
export function locateSpecPath(spec: unknown, dotted: string): { value: unknown; at: Array<string | number>; missing?: 'key' | 'element' } {
  let value: unknown = spec;
  const at: Array<string | number> = [];
  for (const part of dotted.split('.')) {
    if (Array.isArray(value)) {
      const index = /^\d+$/.test(part) ? Number(part) : value.findIndex((e) => typeof e === 'object' && e !== null && ELEMENT_KEYS.some((k) => (e as Record<string, unknown>)[k] === part));
      if (index < 0 || index >= value.length) return { value: undefined, at, missing: 'element' };
      at.push(index);
      value = value[index];
    } else if (typeof value === 'object' && value !== null) {
      at.push(part);
      if (!Object.prototype.hasOwnProperty.call(value, part)) return { value: undefined, at, missing: 'key' };
      value = (value as Record<string, unknown>)[part];
    } else return { value: undefined, at, missing: 'key' };
  }
  return { value, at };
}

/** one line: revision N of X (date): path from -> to, ...; evidence file (sha256 prefix) */
export function describeRevision(r: SpecRevision): string {
  const changes = r.changes.map((c) => `${c.path} ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)}`).join(', ');
  return `revision ${r.number} of ${r.revises} (${r.date}): ${changes}; evidence ${r.evidence.file} (sha256 ${r.evidence.sha256.slice(0, 12)})`;
}
