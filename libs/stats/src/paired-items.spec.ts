import { decidePairedItems, pairItems, parseItemLines, PairedItemsError } from './paired-items';

const rule = { alpha: 0.05, bounds: [0, 1] as const, margin: -0.03, weights: { treatment: 1, baseline: -1 } };
const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

describe('parseItemLines', () => {
  it('reads item lines, skipping blank lines and ignoring extra fields', () => {
    const items = parseItemLines({ source: 't.jsonl', text: '{"item_id":"a","correct":true,"extracted":"18"}\n\n{"item_id":7,"correct":false}\n' });
    expect(items).toEqual([
      { itemId: 'a', correct: true, line: 1 },
      { itemId: 7, correct: false, line: 3 },
    ]);
  });

  it.each([
    ['{"item_id":"a","correct":1}', 't.jsonl:1: correct must be true or false, got 1'],
    ['{"item_id":"a","correct":"true"}', 't.jsonl:1: correct must be true or false, got "true"'],
    ['{"item_id":"a"}', 't.jsonl:1: correct must be true or false, got nothing'],
    ['{"correct":true}', 't.jsonl:1: item_id must be a non-empty string or an integer, got nothing'],
    ['{"item_id":1.5,"correct":true}', 't.jsonl:1: item_id must be a non-empty string or an integer, got 1.5'],
    ['[1,2]', 't.jsonl:1: expected an object {"item_id": ..., "correct": true|false}'],
    ['{"item_id":', 't.jsonl:1: not valid JSON'],
    ['{"item_id":"a","correct":true}\n{"item_id":"a","correct":false}', 't.jsonl:2: duplicate item_id "a" (first on line 1)'],
    ['\n\n', 't.jsonl: no items'],
    [`{"item_id":${'9'.repeat(400)},"correct":true}`, 't.jsonl:1: item_id is a number too large to keep exactly (integer ids go up to 9007199254740991); write it as a string'],
    ['{"item_id":9007199254740993,"correct":true}', 't.jsonl:1: item_id is a number too large to keep exactly (integer ids go up to 9007199254740991); write it as a string'],
    ['{"item_id":-1e308,"correct":true}', 't.jsonl:1: item_id is a number too large to keep exactly (integer ids go up to 9007199254740991); write it as a string'],
    [`{"item_id":"${'y'.repeat(5000)}","correct":true}\n{"item_id":"${'y'.repeat(5000)}","correct":true}`, `t.jsonl:2: duplicate item_id "${'y'.repeat(39)}... (first on line 1)`],
  ])('rejects %j', (text, message) => {
    expect(() => parseItemLines({ source: 't.jsonl', text })).toThrow(new PairedItemsError(message));
  });
});

describe('one-line messages', () => {
  it('keeps the largest exact integer id and quotes a file name holding a line break', () => {
    expect(parseItemLines({ source: 't', text: '{"item_id":9007199254740991,"correct":true}' })).toEqual([{ itemId: 9007199254740991, correct: true, line: 1 }]);
    expect(() => parseItemLines({ source: 'a\nb.jsonl', text: '{oops' })).toThrow(new PairedItemsError('"a\\nb.jsonl":1: not valid JSON'));
    const t = parseItemLines({ source: 't', text: jsonl([{ item_id: 'z'.repeat(1 << 20), correct: true }]) });
    const b = parseItemLines({ source: 'b\r', text: jsonl([{ item_id: 1, correct: true }]) });
    expect(() => pairItems({ source: 't', items: t }, { source: 'b\r', items: b })).toThrow(
      `item sets differ: 1 only in t (item_id "${'z'.repeat(39)}... line 1); 1 only in "b\\r" (item_id 1 line 1)`,
    );
  });
});

describe('pairItems', () => {
  it('pairs by item_id in treatment order whatever the baseline order', () => {
    const t = parseItemLines({ source: 't', text: jsonl([{ item_id: 'x', correct: true }, { item_id: 'y', correct: false }, { item_id: 'z', correct: true }]) });
    const b = parseItemLines({ source: 'b', text: jsonl([{ item_id: 'z', correct: false }, { item_id: 'x', correct: true }, { item_id: 'y', correct: true }]) });
    expect(pairItems({ source: 't', items: t }, { source: 'b', items: b })).toEqual({ itemIds: ['x', 'y', 'z'], treatment: [1, 0, 1], baseline: [1, 1, 0] });
  });

  it('names the items that only one file holds', () => {
    const t = parseItemLines({ source: 't', text: jsonl([{ item_id: 'x', correct: true }, { item_id: 'y', correct: true }]) });
    const b = parseItemLines({ source: 'b', text: jsonl([{ item_id: 'x', correct: true }, { item_id: '1', correct: true }, { item_id: 1, correct: true }]) });
    expect(() => pairItems({ source: 't', items: t }, { source: 'b', items: b })).toThrow(
      'item sets differ: 1 only in t (item_id "y" line 2); 2 only in b (item_id "1" line 2, item_id 1 line 3)',
    );
  });
});

describe('decidePairedItems', () => {
  it('scores paired files with the Hoeffding rule', () => {
    const t = { source: 't', text: jsonl([{ item_id: 1, correct: true }, { item_id: 2, correct: true }, { item_id: 3, correct: false }, { item_id: 4, correct: true }]) };
    const b = { source: 'b', text: jsonl([{ item_id: 4, correct: false }, { item_id: 3, correct: false }, { item_id: 2, correct: true }, { item_id: 1, correct: false }]) };
    const r = decidePairedItems(t, b, rule);
    expect(r.n).toBe(4);
    expect(r.effect).toBe(0.5);
    expect(r.winsTreatment).toBe(2);
    expect(r.winsBaseline).toBe(0);
  });
});
