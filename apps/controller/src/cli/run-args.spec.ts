import { parseRunArgs } from './run-args';

describe('rx run flags', () => {
  it('parses a new run and a resume', () => {
    expect(parseRunArgs(['--spec', 's.json', '--out', 'runs/x', '--backend', 'tinker', '--port', '0'])).toEqual({
      specPath: 's.json',
      outDir: 'runs/x',
      resumeDir: undefined,
      overridePath: undefined,
      backend: 'tinker',
      services: 'spawn',
      httpPort: 0,
    });
    expect(parseRunArgs(['--resume', 'runs/x', '--services', 'external', '--port', 'off'])).toMatchObject({ resumeDir: 'runs/x', services: 'external', httpPort: null });
  });

  it('says what is wrong in one line', () => {
    expect(() => parseRunArgs(['--out', 'x'])).toThrow(/--spec is required/);
    expect(() => parseRunArgs(['--spec', 's', '--backend', 'gpu'])).toThrow(/--backend must be embedded or tinker, got 'gpu'/);
    expect(() => parseRunArgs(['--spec', 's', '--bogus'])).toThrow(/Unknown option '--bogus'.*usage: rx run/);
    expect(() => parseRunArgs(['--resume', 'a', '--out', 'b'])).toThrow(/drop --out/);
    expect(() => parseRunArgs(['--spec', 's', '--port', 'x'])).toThrow(/--port must be/);
  });

  it('keeps the hint of --port for a negative port (parseArgs would take -1 for an option)', () => {
    expect(() => parseRunArgs(['--spec', 's', '--port', '-1'])).toThrow(/^--port must be a port number \(0 for any free one\) or 'off', got '-1'$/);
    expect(() => parseRunArgs(['--spec', 's', '--port=-1'])).toThrow(/^--port must be a port number \(0 for any free one\) or 'off', got '-1'$/);
  });

  it('takes --accept-changes with --resume only', () => {
    expect(parseRunArgs(['--resume', 'runs/x', '--accept-changes'])).toMatchObject({ resumeDir: 'runs/x', acceptChanges: true });
    expect(parseRunArgs(['--resume', 'runs/x']).acceptChanges).toBeUndefined();
    expect(() => parseRunArgs(['--spec', 's', '--accept-changes'])).toThrow(/--accept-changes is for --resume/);
  });
});
