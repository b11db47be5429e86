// rendererFor: the character renderer for the embedded model, the Qwen3.5 renderer from a local
// tokenizer.json or from a hub (here a local HTTP server standing in for huggingface.co), clear errors.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { charRenderer } from './char-renderer';
import { TokenizerLoadError } from './qwen3-renderer.tokenizer';
import { UnknownBaseModelError, rendererFor } from './renderer-registry';

const FIXTURE = path.join(__dirname, '..', 'testing', 'fixtures', 'tiny-qwen-tokenizer.json');

describe('rendererFor', () => {
  it('gives the character renderer for the embedded model', async () => {
    await expect(rendererFor('rx-embedded/char-lm')).resolves.toBe(charRenderer);
    await expect(rendererFor('rx/char-lm')).resolves.toBe(charRenderer);
  });

  it('builds the Qwen3.5 renderer from a tokenizer.json path or its folder', async () => {
    const fromFile = await rendererFor('Qwen/Qwen3.5-2B', { tokenizerPath: FIXTURE });
    expect(fromFile.name).toBe('qwen3_5_disable_thinking');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-tok-'));
    try {
      fs.copyFileSync(FIXTURE, path.join(dir, 'tokenizer.json'));
      const fromDir = await rendererFor('Qwen/Qwen3.5-2B', { tokenizerPath: dir });
      expect(fromDir.buildPrompt('What is 1+1?')).toEqual(fromFile.buildPrompt('What is 1+1?'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fetches tokenizer.json from a hub endpoint once and then reads the cache', async () => {
    const body = fs.readFileSync(FIXTURE);
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/Qwen/Qwen3.5-2B/resolve/main/tokenizer.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-hub-'));
    try {
      const a = await rendererFor('Qwen/Qwen3.5-2B', { hub: { endpoint, cacheDir } });
      expect(seen).toEqual(['/Qwen/Qwen3.5-2B/resolve/main/tokenizer.json', '/Qwen/Qwen3.5-2B/resolve/main/tokenizer_config.json']);
      const b = await rendererFor('Qwen/Qwen3.5-2B', { hub: { endpoint, cacheDir } });
      expect(seen).toHaveLength(2);
      expect(b.buildPrompt('q')).toEqual(a.buildPrompt('q'));
      await expect(rendererFor('Qwen/Qwen3.5-9B', { hub: { endpoint } })).rejects.toThrow(
        new TokenizerLoadError(`fetching ${endpoint}/Qwen/Qwen3.5-9B/resolve/main/tokenizer.json answered HTTP 404`),
      );
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      fs.rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it('names the missing file and the unknown model', async () => {
    await expect(rendererFor('Qwen/Qwen3.5-2B', { tokenizerPath: '/nonexistent/tok' })).rejects.toThrow(
      'no tokenizer at /nonexistent/tok: give a tokenizer.json file or a folder holding one',
    );
    await expect(rendererFor('meta-llama/Llama-3.1-8B')).rejects.toThrow(UnknownBaseModelError);
  });
});
