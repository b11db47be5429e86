// The synthetic `arith` task: seeded grade-school word problems with 1 to 3 operations and an integer answer,
// written like GSM8K (`<worked steps>\n#### N`) so libs/grading grades them. One seeded stream of distinct
// questions: the first 1319 are the test split, the next ARITH_TRAIN_SIZE (never a test question) the train split.
import type { Problem } from './problem';

export type ArithSplit = 'train' | 'test';

export interface ArithOptions {
  split: ArithSplit;
  seed: number;
}

export const ARITH_TEST_SIZE = 1319;
export const ARITH_TRAIN_SIZE = 20000;
/** prompt + completion + stop token of every problem fit this many characters (the embedded model's context) */
export const ARITH_MAX_CHARS = 128;
/** characters the char renderer adds around a question (<bos>, instruction, header) and after a completion (<eos>) */
const RENDER_OVERHEAD = 1 + ' answer in \\boxed{}.'.length + 1 + 1 + ' \\boxed{}'.length;

const NAMES = ['ann', 'bob', 'sam', 'tom', 'amy', 'max', 'zoe', 'leo', 'mia', 'kim', 'joe', 'eve', 'lily', 'omar', 'nina', 'carl', 'rosa', 'ivan', 'jade', 'hugo'];
const ITEMS = ['pens', 'cards', 'eggs', 'coins', 'books', 'cups', 'toys', 'beads', 'shells', 'stamps', 'apples', 'marbles'];

type Op = { kind: '+' | '-' | '*' | '/'; operand: number; phrase: string };

/** Seeded problems of one split; the same seed always gives the same problems in the same order. */
export function arithDataset({ split, seed }: ArithOptions): Problem[] {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`arith seed must be an integer in [0, 2^32), got ${seed}`);
  const rng = new ArithRng(seed);
  const seen = new Set<string>();
  const test: Problem[] = [];
  const train: Problem[] = [];
  const wanted = split === 'test' ? ARITH_TEST_SIZE : ARITH_TEST_SIZE + ARITH_TRAIN_SIZE;
  while (test.length + train.length < wanted) {
    const p = drawProblem(rng);
    if (seen.has(p.question)) continue;
    seen.add(p.question);
    const into = test.length < ARITH_TEST_SIZE ? test : train;
    into.push({ id: `arith-${seed}-${test.length < ARITH_TEST_SIZE ? 'test' : 'train'}-${into.length}`, ...p });
  }
  return split === 'test' ? test : train;
}

/** One problem: a start (`has A` or `buys X bags of Y`) then operations, so that 1 to 3 operations are computed. */
function drawProblem(rng: ArithRng): { question: string; answer: string } {
  for (;;) {
    const name = rng.pick(NAMES);
    const item = rng.pick(ITEMS);
    const opCount = rng.int(1, 3);
    const steps: string[] = [];
    let value: number;
    let opening: string;
    let remaining = opCount;
    if (rng.next() < 0.35) {
      const bags = rng.int(2, 5);
      const per = rng.int(2, 9);
      value = bags * per;
      opening = `${name} buys ${bags} bags of ${per} ${item}`;
      steps.push(`${bags}*${per}=${value}.`);
      remaining -= 1;
    } else {
      value = rng.int(2, 20);
      opening = `${name} has ${value} ${item}`;
    }
    const phrases: string[] = [];
    for (let i = 0; i < remaining; i++) {
      const op = drawOp(rng, value);
      const next = apply(op, value);
      steps.push(`${value}${op.kind}${op.operand}=${next}.`);
      phrases.push(op.phrase);
      value = next;
    }
    const question = `${opening}${joinPhrases(rng, phrases)}. ${rng.pick(endings(name, item))}`;
    const answer = `${steps.join(' ')}\n#### ${value}`;
    const completionChars = steps.join(' ').length + String(value).length;
    if (question.length + completionChars + RENDER_OVERHEAD <= ARITH_MAX_CHARS) return { question, answer };
  }
}

function drawOp(rng: ArithRng, value: number): Op {
  for (;;) {
    const r = rng.next();
    if (r < 0.4) {
      const n = rng.int(1, 12);
      return { kind: '+', operand: n, phrase: rng.pick([`buys ${n}`, `finds ${n}`, `gets ${n} more`, `wins ${n}`]) };
    }
    if (r < 0.75) {
      if (value < 3) continue;
      const n = rng.int(1, Math.min(value - 1, 12));
      return { kind: '-', operand: n, phrase: rng.pick([`loses ${n}`, `sells ${n}`, `gives away ${n}`, `uses ${n}`]) };
    }
    if (r < 0.9) {
      if (value > 25) continue;
      return value <= 15 && rng.next() < 0.4 ? { kind: '*', operand: 3, phrase: 'triples them' } : { kind: '*', operand: 2, phrase: 'doubles them' };
    }
    if (value % 2 !== 0) continue;
    return { kind: '/', operand: 2, phrase: 'keeps half' };
  }
}

function apply(op: Op, value: number): number {
  switch (op.kind) {
    case '+':
      return value + op.operand;
    case '-':
      return value - op.operand;
    case '*':
      return value * op.operand;
    case '/':
      return value / op.operand;
  }
}

function joinPhrases(rng: ArithRng, phrases: string[]): string {
  if (phrases.length === 0) return '';
  if (phrases.length === 1) return rng.next() < 0.5 ? ` and ${phrases[0]}` : `, then ${phrases[0]}`;
  return `, ${phrases.slice(0, -1).join(', ')}, then ${phrases[phrases.length - 1]}`;
}

function endings(name: string, item: string): string[] {
  return ['how many now?', `how many ${item} now?`, `how many does ${name} have?`];
}

/** splitmix32 over a 32-bit state: a small seeded generator that gives the same stream in every process */
class ArithRng {
  private state: number;
  constructor(seed: number) {
    this.state = (seed ^ 0x9e3779b9) >>> 0;
  }
  /** uniform in [0, 1) */
  next(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z ^= z >>> 16;
    return (z >>> 0) / 4294967296;
  }
  /** uniform integer in [lo, hi] */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
}
