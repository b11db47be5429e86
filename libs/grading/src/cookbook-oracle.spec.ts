// Every case of fixtures/cookbook-oracle.json was labelled by running the cookbook's own Python grader; the port
// must give the same answer on each (or raise where it raised).
import { extractBoxed } from './boxed-answer';
import { normalizeAnswer, normalizeExpression } from './answer-normalize';
import { extractGroundTruth } from './gsm8k-answer';
import { latexToText } from './latex-to-text';
import { isEquivalent } from './math-grade';
import { gradeCompletion } from './problem-reward';
import oracle from './fixtures/cookbook-oracle.json';

type Case = { op: string; raises?: boolean; expected?: unknown } & Record<string, unknown>;

function run(c: Case): unknown {
  const str = (k: string): string => String(c[k]);
  switch (c.op) {
    case 'grade':
      return isEquivalent(str('given'), str('gt'));
    case 'norm':
      return normalizeExpression(str('s'));
    case 'mathd':
      return normalizeAnswer(str('s'));
    case 'latex':
      return latexToText(str('s'));
    case 'boxed':
      return extractBoxed(str('s'));
    case 'gt':
      try {
        return extractGroundTruth(str('s'));
      } catch {
        return null;
      }
    case 'reward': {
      const g = gradeCompletion(str('completion'), str('answer'), { endedOnStop: true });
      return [g.extracted, g.formatOk, g.correct];
    }
    default:
      throw new Error(`unknown op ${c.op}`);
  }
}

describe('agreement with the cookbook grader run in Python', () => {
  const cases = (oracle as { cases: Case[] }).cases;
  it('holds more than 2000 labelled cases of every kind', () => {
    expect(cases.length).toBeGreaterThan(2000);
    expect(new Set(cases.map((c) => c.op))).toEqual(new Set(['grade', 'norm', 'mathd', 'latex', 'boxed', 'gt', 'reward']));
  });
  it('agrees on every case', () => {
    const disagreements: string[] = [];
    for (const c of cases) {
      if (c.raises) {
        if (c.op !== 'latex') throw new Error('only the LaTeX converter is expected to raise');
        expect(() => run(c)).toThrow();
        continue;
      }
      const got = run(c);
      if (JSON.stringify(got) !== JSON.stringify(c.expected)) disagreements.push(`${JSON.stringify(c)} -> ${JSON.stringify(got)}`);
    }
    expect(disagreements).toEqual([]);
  });
});
