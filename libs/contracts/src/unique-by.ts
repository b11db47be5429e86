// A zod refinement: the values of key(item) are distinct within obj[field].
import type { RefinementCtx } from 'zod';
import { quoted } from './issue-text';

export function uniqueBy<F extends string, T>(field: F, key: (item: T) => string) {
  return (obj: { [K in F]: readonly T[] }, ctx: RefinementCtx): void => {
    const seen = new Set<string>();
    obj[field].forEach((item, index) => {
      const k = key(item);
      if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [field, index], message: `duplicate id ${quoted(k)}` });
      seen.add(k);
    });
  };
}
