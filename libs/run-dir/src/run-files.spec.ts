// The catalog's writer and reader: a value its readers would refuse is never written; a file is read back as
// written (checked, not reordered or stripped); a damaged file is one line naming it, what is wrong and the fix;
// a JSON-lines file reads up to its first line that does not match.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { appendRunLine, readRunFile, readRunFileIfExists, readRunLines, RunFileError, writeRunFile } from './run-files';
import { RunDir } from './run-layout';
import type { SeenDeadLetterLine } from './dead-letter.schema';

const manifest = {
  version: 1 as const,
  runId: 'run-1',
  createdAt: '2026-12-03T10:00:00.000Z',
  spec: { source: 'specs/embedded.json', sourceSha256: 'a'.repeat(64), sha256: 'b'.repeat(64) },
  override: null,
  backend: 'embedded' as const,
  services: 'spawn' as const,
};

const letter = (n: number): SeenDeadLetterLine => ({
  deadLetterJobId: `dl-${n}`,
  sourceQueue: 'sample-requests',
  sourceJobId: `run-1-gs1_kernel-${n}-sample`,
  reason: 'unrecoverable',
  error: null,
  receivedAt: null,
  seen_at: '2026-12-03T10:00:01.000Z',
});

describe('the run files', () => {
  let dir: RunDir;
  beforeEach(() => (dir = new RunDir(mkdtempSync(path.join(tmpdir(), 'rx-run-files-')))));
  afterEach(() => rmSync(dir.root, { recursive: true, force: true }));

  it('writes a file its schema accepts, as pretty JSON, and reads it back as written (extra fields kept, key order kept)', () => {
    // the keys in another order than the schema's
    const { services, ...rest } = manifest;
    const value = { services, ...rest, note: 'a field the schema does not name' };
    writeRunFile(dir, 'run.json', value);
    expect(readFileSync(dir.runFile, 'utf8')).toBe(`${JSON.stringify(value, null, 2)}\n`);
    const back = readRunFile(dir, 'run.json');
    expect(JSON.stringify(back)).toBe(JSON.stringify(value));
  });

  it('refuses to write a value its readers would refuse, and writes nothing', () => {
    expect(() => writeRunFile(dir, 'run.json', { ...manifest, runId: '../escape' })).toThrow(/not writing .*run\.json: the value is not a run manifest \(runId: Invalid/);
    expect(readRunFileIfExists(dir, 'run.json')).toBeNull();
  });

  it('says in one line what is wrong with a damaged file and how to get a readable run back, never its content', () => {
    const cases: Array<[string, () => void, RegExp]> = [
      ['missing', () => undefined, /run\.json \(a run manifest\) is missing: .* holds no run: restore it from a copy of the run/],
      ['a directory', () => mkdirSync(dir.runFile), /run\.json \(a run manifest\) is a directory, not a file: restore it/],
      ['not JSON', () => writeFileSync(dir.runFile, 'TINKER_API_KEY=sk-secret'), /run\.json \(a run manifest\) is not JSON \(24 bytes\): restore it/],
      ['empty', () => writeFileSync(dir.runFile, ''), /run\.json \(a run manifest\) is not JSON \(empty\)/],
      ['a field of the wrong type', () => writeFileSync(dir.runFile, JSON.stringify({ ...manifest, backend: 'gpu' })), /run\.json is not a run manifest \(backend: Invalid enum value/],
    ];
    for (const [what, damage, message] of cases) {
      rmSync(dir.runFile, { recursive: true, force: true });
      damage();
      let error: unknown = null;
      try {
        readRunFile(dir, 'run.json');
      } catch (err) {
        error = err;
      }
      expect([what, error instanceof RunFileError, (error as Error).message]).toEqual([what, true, expect.stringMatching(message)]);
      expect((error as Error).message).not.toMatch(/\n|sk-secret/);
    }
  });

  it('asks for the file of an arm or a pilot, whose path it cannot guess', () => {
    expect(() => readRunFile(dir, '<arm>/training.json')).toThrow('<arm>/training.json: pass the file');
  });

  it('reads a JSON-lines file up to its first line that does not match (a torn last line, a foreign line)', () => {
    const file = dir.deadLettersFile;
    appendRunLine(dir, 'dead-letters.jsonl', file, letter(0));
    appendRunLine(dir, 'dead-letters.jsonl', file, letter(1));
    expect(readRunLines(dir, 'dead-letters.jsonl', file).map((l) => l.deadLetterJobId)).toEqual(['dl-0', 'dl-1']);
    appendFileSync(file, `${JSON.stringify({ deadLetterJobId: 'dl-2' })}\n${JSON.stringify(letter(3))}\n{"torn`);
    expect(readRunLines(dir, 'dead-letters.jsonl', file).map((l) => l.deadLetterJobId)).toEqual(['dl-0', 'dl-1']);
    expect(readRunLines(dir, 'dead-letters.jsonl', dir.path('absent.jsonl'))).toEqual([]);
  });

  it('refuses to append a line its readers would stop at', () => {
    expect(() => appendRunLine(dir, 'dead-letters.jsonl', dir.deadLettersFile, { ...letter(0), seen_at: undefined as unknown as string })).toThrow(/seen_at: Required/);
    expect(readRunLines(dir, 'dead-letters.jsonl', dir.deadLettersFile)).toEqual([]);
  });
});
