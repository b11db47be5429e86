// specs/gs1-vs-grpo.json is the published spec shipped with rx (the real experiment's; docs/tinker.md): it
// parses unchanged. shared-spec.acceptance.ts checks it is byte for byte the published file.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadSpecText } from './parse-spec';

describe('the shipped gs1-vs-grpo spec', () => {
  it('parses unchanged and names the real model and data', () => {
    const text = readFileSync(resolve(__dirname, '..', '..', '..', 'specs', 'gs1-vs-grpo.json'), 'utf8');
    const r = loadSpecText(text);
    expect(r.ok ? [] : r.errors).toEqual([]);
    if (!r.ok) return;
    expect(r.spec).toEqual(JSON.parse(text));
    expect(JSON.stringify(r.spec)).toContain('Qwen/Qwen3.5-2B');
  });
});
