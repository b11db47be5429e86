import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { intactRecord } from '@rx/exchange-record/testing';
import { RunDir, sha256Hex } from '@rx/run-dir';
import { readInside, referencedFiles } from './check-run-record';

describe('the files a record names', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'rx-refs-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('lists every reference: predictions, manifest, observations, evidence, pilot sources, pinned sources', () => {
    const { record, texts } = intactRecord();
    expect(referencedFiles(record)).toEqual(Object.keys(texts).sort());
    expect(referencedFiles({ feasibility: { source: 'a.json, b.json' }, evaluation: { scores: 'not a list' } })).toEqual(['a.json', 'b.json']);
    expect(referencedFiles(null)).toEqual([]);
  });

  it('reads a file inside the run directory, and nothing outside it', () => {
    const run = path.join(root, 'run');
    mkdirSync(path.join(run, 'a'), { recursive: true });
    writeFileSync(path.join(run, 'a', 'x.jsonl'), 'x\n');
    writeFileSync(path.join(root, 'outside.txt'), 'secret\n');
    const dir = new RunDir(run);
    expect(readInside(dir, 'a/x.jsonl')).toEqual({ sha256: sha256Hex('x\n'), text: 'x\n' });
    expect(readInside(dir, '../outside.txt')).toBeNull();
    expect(readInside(dir, path.join(root, 'outside.txt'))).toBeNull();
    expect(readInside(dir, 'a')).toBeNull();
    expect(readInside(dir, 'missing.json')).toBeNull();
  });
});
