// THE LONGEST TEST (about a minute on 2 cores): `rx run` itself, as `npm start` runs it, on a reduced embedded
// experiment: the CLI starts the controller, which starts the policy server (the embedded transformer), the four
// services and uses the real Redis. Reduced by a spec override to 1 training step per arm and 16 eval items; the
// pilot and the gates are as the spec says. Every file of the run directory is checked against the others.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { arithDataset } from '@rx/datasets';
import { REPO_ROOT } from '../infra/repo-root';
import { checkCompletedRun, cli } from './run-directory.check';

jest.setTimeout(300_000);

const CHECKPOINT = path.join(REPO_ROOT, 'models', 'char-lm');
const haveModel = existsSync(CHECKPOINT);
if (!haveModel) console.warn(`controller e2e: the embedded checkpoint ${CHECKPOINT} is not in the tree; the embedded rx run test is SKIPPED`);

(haveModel ? describe : describe.skip)('rx run on the embedded model (policy server and services spawned)', () => {
  let work: string;
  beforeAll(() => (work = mkdtempSync(path.join(tmpdir(), 'rx-ctl-embedded-'))));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('runs a reduced experiment end to end; the run directory agrees with itself', () => {
    const steps = 1;
    const nEval = 16;
    const override = path.join(work, 'override.json');
    writeFileSync(override, JSON.stringify({ steps, dataset: { n_examples: 128 }, eval: { n_examples: nEval }, feasibility: { effective_config: { steps, n_eval: nEval } } }));
    const out = path.join(work, 'run');
    const r = cli(['run', '--spec', 'specs/embedded.json', '--override', override, '--out', out, '--port', 'off']);
    if (r.status !== 0) throw new Error(`rx run exited ${r.status}\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`);
    expect(r.stdout).toMatch(/verdict: (supported|inconclusive|refuted)/);
    const { record } = checkCompletedRun(out, arithDataset({ split: 'test', seed: 0 }).slice(0, nEval).map((p) => p.id));
    expect(record.backend).toBe('embedded');
    expect(record.feasibility.gpu_hours.projected).toBe(0);
  });
});
