import { DEV_SPLIT_SIZE, assertDevDisjoint, devOverlap, devSplit } from './dev-split';
import { arithDataset } from './arith';
import { seededShuffle, takeTrainPrompts } from './seeded-shuffle';

const N_RL_PROMPTS = 2560; // specs/embedded.json dataset.n_examples

describe('the arith dev split', () => {
  const train = arithDataset({ split: 'train', seed: 0 });
  const test = arithDataset({ split: 'test', seed: 0 });
  const rl = takeTrainPrompts(train, N_RL_PROMPTS, 0);
  const dev = devSplit(train, N_RL_PROMPTS, DEV_SPLIT_SIZE, 0);

  it('is 512 distinct train items, none an RL prompt, none a test item', () => {
    expect(dev).toHaveLength(512);
    expect(new Set(dev.map((p) => p.question)).size).toBe(512);
    const trainIds = new Set(train.map((p) => p.id));
    expect(dev.every((p) => trainIds.has(p.id))).toBe(true);
    const rlQuestions = new Set(rl.map((p) => p.question));
    const testQuestions = new Set(test.map((p) => p.question));
    expect(dev.filter((p) => rlQuestions.has(p.question))).toEqual([]);
    expect(dev.filter((p) => testQuestions.has(p.question))).toEqual([]);
    expect(() => assertDevDisjoint(dev, rl, test)).not.toThrow();
  });

  it('is the tail of the seed-0 order and the same in every call', () => {
    const order = seededShuffle(train, 0);
    expect(dev).toEqual(order.slice(order.length - 512));
    expect(devSplit(train, N_RL_PROMPTS, DEV_SPLIT_SIZE, 0)).toEqual(dev);
  });

  it('the check fails on a dev split that takes RL prompts or test items', () => {
    // the head of the order is the RL prompts: a dev split drawn there overlaps them all
    const head = seededShuffle(train, 0).slice(0, 512);
    expect(devOverlap(head, rl, test).withTrainPrompts).toHaveLength(512);
    expect(() => assertDevDisjoint(head, rl, test)).toThrow(/512 question\(s\) are RL prompts/);
    const leaked = [...dev.slice(1), test[7]];
    expect(devOverlap(leaked, rl, test).withTest).toEqual([test[7].question]);
    expect(() => assertDevDisjoint(leaked, rl, test)).toThrow(/1 are test items/);
  });

  it('refuses a dev split that would reach into the RL prompts', () => {
    expect(() => devSplit(train, train.length - 100, 101)).toThrow(/needs 20001 train items/);
    expect(() => devSplit(train, 0, 0)).toThrow(/positive integer/);
  });
});
