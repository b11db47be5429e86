// The rx command as a user meets it: `bin/rx.js` (what `npx rx` runs) as a child process, asking for help and the
// version before anything else.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const rx = (...args: string[]) => spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'rx.js'), ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
const COMMANDS = ['validate', 'advantages', 'decide', 'grade', 'data', 'report', 'run', 'status'];

describe('rx help and version', () => {
  it('is the bin that package.json names', () => {
    expect(JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).bin).toEqual({ rx: 'bin/rx.js' });
  });

  it('lists every command on --help, exit 0', () => {
    const r = rx('--help');
    expect(r.status).toBe(0);
    for (const c of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
  });

  it.each(COMMANDS)('prints the help of %s for --help, -h and help <command>, exit 0, running nothing', (c) => {
    for (const r of [rx(c, '--help'), rx('help', c), rx(c, '-h')]) {
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`^usage: rx ${c}\\b`));
    }
  });

  it('shows --help for run even with other flags, and never starts a run', () => {
    const r = rx('run', '--spec', 'specs/embedded.json', '--out', '/nonexistent/never', '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--resume DIR');
  });

  it('prints the package version on --version, -V and version', () => {
    const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V', 'version']) {
      const r = rx(flag);
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toBe(`rx ${version}`);
    }
  });

  it('says one line and exits 2 for an unknown command or help topic, and for no command', () => {
    for (const args of [['nope'], ['help', 'nope']]) {
      const r = rx(...args);
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual(["rx: unknown command 'nope'; run 'rx --help' for the list of commands"]);
    }
    const none = rx();
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('usage: rx <command>');
  });
});
