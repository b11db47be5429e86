// The run's tokenizer: RX_TOKENIZER_PATH as given, else the cache filled by `rx data fetch tokenizer` (raw bytes,
// sha256 checked against the pin); nothing cached is one line naming the command. Fetched over real HTTP from a
// local stand-in for the hub that serves the tiny Qwen-style fixture.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadTokenizerFromPath } from './qwen3-renderer.tokenizer';
import { fetchTokenizerToCache, resolveRunTokenizer, TokenizerUnavailableError, type TokenizerPin } from './tokenizer-pin';

const FIXTURE = path.join(__dirname, '..', 'testing', 'fixtures', 'tiny-qwen-tokenizer.json');
const FIXTURE_BYTES = fs.readFileSync(FIXTURE);
const FIXTURE_SHA = createHash('sha256').update(FIXTURE_BYTES).digest('hex');
const MODEL = 'Qwen/Qwen3.5-2B';
const REV = 'a'.repeat(40);

describe('the run tokenizer (pin, cache, override)', () => {
  let root: string;
  let hub: Server;
  let endpoint: string;
  const served: string[] = [];
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-tok-pin-'));
    hub = createServer((req, res) => {
      served.push(req.url ?? '');
      if (req.url === `/${MODEL}/resolve/${REV}/tokenizer.json`) return void res.end(FIXTURE_BYTES);
      res.statusCode = 404;
      res.end('{}');
    });
    await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => hub.close(r));
    fs.rmSync(root, { recursive: true, force: true });
  });
  const env = (name: string, extra: Record<string, string> = {}) => ({ RX_CACHE_DIR: path.join(root, name), ...extra });

  it('the embedded character model needs no tokenizer file', () => {
    expect(resolveRunTokenizer('rx-embedded/char-lm', env('none'))).toBeNull();
  });

  it('offline with nothing cached: one line naming the command (with --revision when rx has no pin)', () => {
    const unpinned = () => resolveRunTokenizer(MODEL, env('empty'), {});
    expect(unpinned).toThrow(TokenizerUnavailableError);
    expect(unpinned).toThrow(new RegExp(`^no tokenizer for Qwen/Qwen3\\.5-2B in .*empty: run \`rx data fetch tokenizer Qwen/Qwen3\\.5-2B --revision <commit>\` \\(or set RX_TOKENIZER_PATH to a tokenizer\\.json\\); nothing was written$`));
    const pins = { [MODEL]: { hubModel: MODEL, revision: REV, sha256: FIXTURE_SHA } };
    expect(() => resolveRunTokenizer(MODEL, env('empty'), pins)).toThrow(/\(pinned revision a{40}\): run `rx data fetch tokenizer Qwen\/Qwen3\.5-2B` \(or set/);
  });

  it('RX_TOKENIZER_PATH (a file or its folder) is used as given, its sha256 recorded against the pin', () => {
    const pins = { [MODEL]: { hubModel: MODEL, revision: REV, sha256: FIXTURE_SHA } };
    expect(resolveRunTokenizer(MODEL, env('x', { RX_TOKENIZER_PATH: FIXTURE }), pins)).toEqual({ path: FIXTURE, sha256: FIXTURE_SHA, source: 'RX_TOKENIZER_PATH', revision: null, pin: pins[MODEL], matches_pin: true });
    const other: Record<string, TokenizerPin> = { [MODEL]: { ...pins[MODEL], sha256: 'b'.repeat(64) } };
    const folder = path.join(root, 'folder');
    fs.mkdirSync(folder);
    fs.copyFileSync(FIXTURE, path.join(folder, 'tokenizer.json'));
    expect(resolveRunTokenizer(MODEL, env('x', { RX_TOKENIZER_PATH: folder }), other)).toMatchObject({ path: path.join(folder, 'tokenizer.json'), sha256: FIXTURE_SHA, matches_pin: false });
    expect(() => resolveRunTokenizer(MODEL, env('x', { RX_TOKENIZER_PATH: path.join(root, 'nope.json') }), {})).toThrow(/^RX_TOKENIZER_PATH: no tokenizer\.json at .*nope\.json$/);
  });

  it('fetches the raw bytes at a revision into the cache, and every run then uses that file, checked by its sha256', async () => {
    const e = env('fetched');
    await expect(fetchTokenizerToCache(MODEL, { cacheDir: e.RX_CACHE_DIR, endpoint, revision: 'main', pins: {} })).rejects.toThrow(/--revision must be a 40-hex commit/);
    const { file, pin } = await fetchTokenizerToCache(MODEL, { cacheDir: e.RX_CACHE_DIR, endpoint, revision: REV, pins: {} });
    expect(fs.readFileSync(file).equals(FIXTURE_BYTES)).toBe(true);
    expect(pin).toEqual({ hubModel: MODEL, revision: REV, sha256: FIXTURE_SHA });
    const run = resolveRunTokenizer(MODEL, e, {});
    expect(run).toEqual({ path: file, sha256: FIXTURE_SHA, source: 'cache', revision: REV, pin: null, matches_pin: null });
    expect(loadTokenizerFromPath(run!.path).tokenToId('<|im_end|>')).toBe(269);
    // a cached file that changed since it was fetched is refused
    fs.appendFileSync(file, ' ');
    expect(() => resolveRunTokenizer(MODEL, e, {})).toThrow(/tokenizer\.json has sha256 [0-9a-f]{64}, not the pinned [0-9a-f]{64} \(revision a{40}\): remove it/);
  });

  it("under rx's pin: the pinned revision only, and a file whose sha256 is not the pin's is not cached", async () => {
    const good = { [MODEL]: { hubModel: MODEL, revision: REV, sha256: FIXTURE_SHA } };
    const e = env('pinned');
    await expect(fetchTokenizerToCache(MODEL, { cacheDir: e.RX_CACHE_DIR, endpoint, revision: 'c'.repeat(40), pins: good })).rejects.toThrow(/is pinned to revision a{40}; --revision c{40} is refused/);
    const bad = { [MODEL]: { ...good[MODEL], sha256: 'd'.repeat(64) } };
    await expect(fetchTokenizerToCache(MODEL, { cacheDir: e.RX_CACHE_DIR, endpoint, pins: bad })).rejects.toThrow(/has sha256 [0-9a-f]{64}, not the pinned d{64}; nothing was cached/);
    expect(fs.existsSync(e.RX_CACHE_DIR)).toBe(false);
    await fetchTokenizerToCache(MODEL, { cacheDir: e.RX_CACHE_DIR, endpoint, pins: good });
    expect(resolveRunTokenizer(MODEL, e, good)).toMatchObject({ source: 'cache', revision: REV, matches_pin: true, sha256: FIXTURE_SHA });
  });
});
