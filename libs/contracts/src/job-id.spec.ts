import { chainOfJobId, chainSuffix, jobIdFor, parseJobId } from './job-id';

describe('job ids of a step chain', () => {
  const header = { runId: 'run-2026.t1', arm: 'grpo_gs8', step: 7 };

  it('carries a later chain suffix through every stage, and parses back to the same step', () => {
    const first = jobIdFor(header, 'prepare');
    const again = jobIdFor(header, 'prepare', chainSuffix(3));
    expect(first).toBe('run-2026.t1-grpo_gs8-7-prepare');
    expect(again).toBe('run-2026.t1-grpo_gs8-7-prepare-a3');
    expect(chainOfJobId(first)).toBe('');
    expect(chainOfJobId(again)).toBe('-a3');
    expect(chainOfJobId(jobIdFor(header, 'train', chainOfJobId(again)))).toBe('-a3');
    expect(parseJobId(again)).toEqual(header);
    expect(parseJobId(jobIdFor(header, 'grade', '-a12'))).toEqual(header);
  });

  it('reads no chain from a run id that looks like one, nor from a step-failed id of the first chain', () => {
    expect(chainOfJobId(jobIdFor({ ...header, runId: 'x-a3' }, 'sample'))).toBe('');
    expect(chainOfJobId(`${jobIdFor(header, 'grade')}-failed-1712345678901`)).toBe('');
    expect(chainOfJobId(undefined)).toBe('');
  });
});
