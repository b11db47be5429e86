// A checkpoint's bytes over the wire: the policy server's GET …/checkpoints/{kind}/{name}/archive (a 302 to a signed
// URL of a tar) and the Tinker client's fetchCheckpointAdapter, over real HTTP; the adapter's sha256 checked against
// a safetensors file built here by hand from the backend's own weights. The client's archive reader on archives made
// by the system's tar (gzipped, nested). The hosted-like refusals as the client meets them: no archive route, and a
// per-model seed refused at create_model.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CheckpointBytesUnavailableError, TinkerApiError, TinkerBackend, readCheckpointArchive } from '@rx/backend';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { policyServerConfig, type PolicyServerConfig } from './config';
import { startPolicyServer, type PolicyServer } from './policy-server';

const API_KEY = 'tml-test-key-0123456789';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups.length = 0;
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-archive-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function tinkerClient(baseUrl: string, warn: (m: string) => void = () => undefined): TinkerBackend {
  const tinker = new TinkerBackend({ baseUrl, apiKey: API_KEY, retries: 1, retryBaseDelayMs: 5, retryMaxDelayMs: 10, timing: { stuckTimeoutMs: 50 }, logger: { warn } });
  cleanups.push(() => tinker.close());
  return tinker;
}

async function serve(config: Partial<PolicyServerConfig> = {}): Promise<{ backend: InMemoryPolicyBackend; server: PolicyServer; tinker: TinkerBackend; dataDir: string }> {
  const backend = new InMemoryPolicyBackend();
  const dataDir = tempDir();
  const server = await startPolicyServer(policyServerConfig({ port: 0, dataDir, longPollMs: 1000, apiKey: API_KEY, ...config }), backend, { logger: false });
  cleanups.push(async () => {
    await server.close();
    await backend.close();
  });
  return { backend, server, tinker: tinkerClient(server.url), dataDir };
}

/** safetensors written independently: u64 LE header length, the JSON header padded with spaces to 8, LE float64 data */
function handMadeSafetensors(name: string, shape: number[], values: Float64Array): Buffer {
  const json = `{"__metadata__":{"format":"pt"},"${name}":{"dtype":"F64","shape":[${shape.join(',')}],"data_offsets":[0,${values.length * 8}]}}`;
  const header = Buffer.from(json + ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8));
  const data = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => data.writeDoubleLE(v, i * 8));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([length, header, data]);
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const ADAM = { learningRate: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
const hosted = (h: Partial<NonNullable<PolicyServerConfig['hostedLike']>>) => ({ hostedLike: { refuse_model_seed: false, no_archive_route: false, faults: {}, ...h } });

describe('checkpoint archives over the wire', () => {
  it('hashes adapter_model.safetensors of a saved state and of sampler weights; a trained state hashes differently', async () => {
    const { backend, tinker, dataDir } = await serve();
    const client = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 });
    const init = await client.saveState('init');
    await client.forwardBackward([{ inputTokens: [1, 2, 3], targetTokens: [2, 3, 4], samplingLogprobs: [0, -2, -2], advantages: [0, 1, 1] }], 'importance_sampling');
    await client.optimStep(ADAM);
    const trained = await client.saveState('trained');
    const sampler = await client.saveWeightsForSampler('trained');

    const initAdapter = await tinker.checkpointAdapter(init);
    expect(initAdapter).toMatchObject({ file: 'adapter_model.safetensors', complete: true, optimizerStep: 0, route: expect.stringMatching(/^GET \/api\/v1\/training_runs\/.+\/checkpoints\/weights\/init\/archive$/) });
    expect(initAdapter.files).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'checkpoint_complete', 'optimizer_state.json']);
    const trainedAdapter = await tinker.checkpointAdapter(trained);
    expect(trainedAdapter.optimizerStep).toBe(1);
    expect(trainedAdapter.sha256).not.toBe(initAdapter.sha256);
    const samplerAdapter = await tinker.checkpointAdapter(sampler);
    expect(samplerAdapter).toMatchObject({ optimizerStep: null, files: ['adapter_config.json', 'adapter_model.safetensors', 'checkpoint_complete'] });
    // the same weights as the trained state, in the same dtype (the bigram keeps float64): the same hash
    expect(samplerAdapter.sha256).toBe(trainedAdapter.sha256);

    // the expected hash, from the backend's weights through a safetensors file made by hand
    const index = JSON.parse(fs.readFileSync(path.join(dataDir, 'tinker-paths.json'), 'utf8')) as { paths: Record<string, { backendPath: string }> };
    for (const [tinkerPath, adapter] of [
      [init, initAdapter],
      [trained, trainedAdapter],
    ] as const) {
      const w = await backend.adapterWeights(index.paths[tinkerPath]!.backendPath);
      expect(adapter.sha256).toBe(sha256(handMadeSafetensors('bigram.w', [32, 32], w.tensors[0]!.data as Float64Array)));
    }
    expect(await tinker.weightsInfo(init)).toMatchObject({ base_model: 'rx-test/bigram', is_lora: true, lora_rank: 1 });
  });

  it('the archive is a tar the system tar lists; its URL needs no key, its route does', async () => {
    const { server, tinker } = await serve();
    const client = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 });
    const state = await client.saveState('s');
    const route = `/api/v1/training_runs/${state.slice('tinker://'.length).split('/')[0]}/checkpoints/weights/s/archive`;
    expect((await fetch(`${server.url}${route}`, { redirect: 'manual' })).status).toBe(401);
    const redirect = await fetch(`${server.url}${route}`, { redirect: 'manual', headers: { 'x-api-key': API_KEY } });
    expect(redirect.status).toBe(302);
    expect(new Date(redirect.headers.get('expires') ?? '').getTime()).toBeGreaterThan(Date.now());
    const location = redirect.headers.get('location') ?? '';
    expect(location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/archives\/[0-9a-f]{64}$/);
    const download = await fetch(location);
    expect([download.status, download.headers.get('content-type')]).toEqual([200, 'application/x-tar']);
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'checkpoint.tar'), Buffer.from(await download.arrayBuffer()));
    expect(execFileSync('tar', ['-tf', path.join(dir, 'checkpoint.tar')], { encoding: 'utf8' }).trim().split('\n').sort()).toEqual([
      'adapter_config.json',
      'adapter_model.safetensors',
      'checkpoint_complete',
      'optimizer_state.json',
    ]);
    // a token never handed out, and one of another form, are refused
    expect((await fetch(location.replace(/[0-9a-f]{64}$/, '0'.repeat(64)))).status).toBe(404);
    expect((await fetch(location.replace(/[0-9a-f]{64}$/, 'x'))).status).toBe(401);
  });

  it('behind a proxy, the signed URL starts with RX_POLICY_PUBLIC_URL, not with the Host the server was reached at', async () => {
    // a reverse proxy that serves the server under /tinker on its own port (as an ingress or a TLS proxy would)
    let upstream = '';
    const proxy = http.createServer((req, res) => {
      if (!req.url?.startsWith('/tinker/')) return void res.writeHead(404).end();
      const fwd = http.request(`${upstream}${req.url.slice('/tinker'.length)}`, { method: req.method, headers: { ...req.headers, host: new URL(upstream).host } }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(fwd);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
    const publicUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/tinker`;
    const { server } = await serve({ publicUrl });
    upstream = server.url;
    const tinker = tinkerClient(publicUrl);
    const client = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 });
    const state = await client.saveState('s');
    const route = `/api/v1/training_runs/${state.slice('tinker://'.length).split('/')[0]}/checkpoints/weights/s/archive`;
    const redirect = await fetch(`${publicUrl}${route}`, { redirect: 'manual', headers: { 'x-api-key': API_KEY } });
    expect(redirect.headers.get('location')).toMatch(new RegExp(`^${publicUrl}/api/v1/archives/[0-9a-f]{64}$`));
    // the client follows it through the proxy and hashes what the server behind it holds
    expect((await tinker.checkpointAdapter(state)).sha256).toBe((await tinkerClient(server.url).checkpointAdapter(state)).sha256);
  });

  it('reads archives made by the system tar: gzipped, in a directory, adapter_model.bin when there is no safetensors', () => {
    const dir = tempDir();
    const ckpt = path.join(dir, 'ckpt');
    fs.mkdirSync(ckpt);
    fs.writeFileSync(path.join(ckpt, 'adapter_model.safetensors'), Buffer.from('not really tensors, hashed as bytes'));
    fs.writeFileSync(path.join(ckpt, 'adapter_config.json'), '{}');
    execFileSync('tar', ['-czf', path.join(dir, 'a.tar.gz'), '-C', dir, 'ckpt']);
    const read = readCheckpointArchive(fs.readFileSync(path.join(dir, 'a.tar.gz')));
    expect(read).toMatchObject({ file: 'adapter_model.safetensors', sha256: sha256(Buffer.from('not really tensors, hashed as bytes')), complete: false, optimizerStep: null });
    fs.rmSync(path.join(ckpt, 'adapter_model.safetensors'));
    fs.writeFileSync(path.join(ckpt, 'adapter_model.bin'), Buffer.from([1, 2, 3]));
    execFileSync('tar', ['-cf', path.join(dir, 'b.tar'), '-C', ckpt, '.']);
    expect(readCheckpointArchive(fs.readFileSync(path.join(dir, 'b.tar')))).toMatchObject({ file: 'adapter_model.bin', sha256: sha256(Buffer.from([1, 2, 3])) });
    fs.rmSync(path.join(ckpt, 'adapter_model.bin'));
    execFileSync('tar', ['-cf', path.join(dir, 'c.tar'), '-C', ckpt, '.']);
    expect(() => readCheckpointArchive(fs.readFileSync(path.join(dir, 'c.tar')))).toThrow('the archive holds no adapter_model.safetensors (nor adapter_model.bin); it holds: adapter_config.json');
  });
});

describe('the hosted-like refusals, as the client meets them', () => {
  it('no_archive_route: the route answers 404 and the client says the service hands out no archive', async () => {
    const { tinker } = await serve(hosted({ no_archive_route: true }));
    const client = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 });
    const state = await client.saveState('s');
    const err = await tinker.checkpointAdapter(state).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointBytesUnavailableError);
    expect(err).toMatchObject({ status: 404, route: expect.stringMatching(/^GET \/api\/v1\/training_runs\/.+\/archive$/) });
    expect((err as Error).message).toMatch(/answered HTTP 404: the service hands out no checkpoint archive/);
    // weights_info still answers: the stand-in evidence
    expect(await tinker.weightsInfo(state)).toMatchObject({ base_model: 'rx-test/bigram', lora_rank: 1 });
  });

  it('refuse_model_seed: the model is created once more without the seed, the client says so, and later ones send none', async () => {
    const { backend, server } = await serve(hosted({ refuse_model_seed: true }));
    const warnings: string[] = [];
    const tinker = tinkerClient(server.url, (m) => warnings.push(m));
    const first = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 });
    expect(first.seedRefused).toMatch(/^create_model refused lora_config\.seed 5 \(Tinker POST \/api\/v1\/create_model answered HTTP 400 .*per-model seeds are refused.*\); the model was created once more without a seed/);
    expect(warnings).toEqual([first.seedRefused]);
    const second = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 });
    expect(second.seedRefused).toBe(first.seedRefused);
    expect(backend.calls.createLoraTrainingClient).toBe(2);
    expect(warnings).toHaveLength(1);
  });

  it('any other refusal of create_model stays the error it was (one line), tried once without the seed', async () => {
    const { backend, tinker } = await serve(hosted({ refuse_model_seed: true }));
    const err = await tinker.createLoraTrainingClient({ baseModel: 'rx-test/no-such-model', rank: 1, seed: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TinkerApiError);
    expect((err as Error).message).toMatch(/HTTP 400.*lora_config\.seed is not supported/);
    expect((err as Error).message.split('\n')).toHaveLength(1);
    expect(backend.calls.createLoraTrainingClient).toBe(0);
    // without the hosted-like mode a seed is taken as it is
    const plain = await serve();
    expect((await plain.tinker.createLoraTrainingClient({ baseModel: 'rx-test/bigram', rank: 1, seed: 5 })).seedRefused).toBeNull();
  });
});
