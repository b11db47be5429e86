// GSM8K as shipped in ../shared/data/gsm8k (RX_SHARED_DIR): sizes, digests, byte-exact re-serialisation, the spec's
// seed-0 train order, and the hub download path at full scale against a local rows server serving the same data.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { GSM8K_SHA256, inspectGsm8kFolder, loadGsm8k, serializeGsm8kJsonl, sha256Hex, writeGsm8kFolder, type Gsm8k } from './gsm8k';
import { fetchGsm8kFromHub } from './gsm8k-hub';
import { startRowsServer } from './gsm8k.fixture';
import { takeTrainPrompts } from './seeded-shuffle';
import { PERMUTATION_DIGESTS } from './seeded-shuffle.fixture';

const SHARED = process.env.RX_SHARED_DIR ?? path.resolve(__dirname, '../../../..', 'shared');
const DIR = path.join(SHARED, 'data', 'gsm8k');

describe('GSM8K in ../shared/data/gsm8k', () => {
  let data: Gsm8k;
  beforeAll(async () => {
    data = await loadGsm8k(DIR);
  });

  it('has 7473 train and 1319 test problems with the published sha256', async () => {
    expect(data.train).toHaveLength(7473);
    expect(data.test).toHaveLength(1319);
    expect(await inspectGsm8kFolder(DIR)).toEqual([
      { split: 'train', count: 7473, sha256: GSM8K_SHA256.train, matchesRelease: true },
      { split: 'test', count: 1319, sha256: GSM8K_SHA256.test, matchesRelease: true },
    ]);
    expect(new Set([...data.train, ...data.test].map((p) => p.id)).size).toBe(7473 + 1319);
    expect(data.test.every((p) => /\n#### \S+$/.test(p.answer))).toBe(true);
  });

  it('re-serialises byte for byte (what rx data fetch writes)', async () => {
    for (const split of ['train', 'test'] as const) {
      const bytes = await readFile(path.join(DIR, `${split}.jsonl`), 'utf8');
      expect(serializeGsm8kJsonl(data[split]) === bytes).toBe(true);
    }
  });

  it('takes the 2560 train prompts in the seed-0 order of HF Dataset.shuffle', () => {
    const prompts = takeTrainPrompts(data.train, 2560);
    const numpy = PERMUTATION_DIGESTS.find((d) => d.n === 7473 && d.seed === '0');
    expect(numpy).toBeDefined();
    expect(prompts.slice(0, numpy!.head.length).map((p) => p.id)).toEqual(numpy!.head.map((k) => `gsm8k-train-${k}`));
    expect(new Set(prompts.map((p) => p.id)).size).toBe(2560);
  });

  it('downloads through the rows API at full scale (local server with the same rows) and writes the release bytes', async () => {
    const raw = (split: 'train' | 'test') => data[split].map((p) => ({ question: p.question, answer: p.answer }));
    const server = await startRowsServer({ data: { train: raw('train'), test: raw('test') } });
    const out = await mkdtemp(path.join(tmpdir(), 'rx-gsm8k-hub-'));
    try {
      const fetched = await fetchGsm8kFromHub({ baseUrl: server.url });
      expect(server.requests).toHaveLength(75 + 14);
      await writeGsm8kFolder(out, fetched);
      for (const split of ['train', 'test'] as const) {
        expect(sha256Hex(await readFile(path.join(out, `${split}.jsonl`)))).toBe(GSM8K_SHA256[split]);
      }
    } finally {
      await server.close();
      await rm(out, { recursive: true, force: true });
    }
  });
});
