// The hosted-like mode: its configuration (RX_POLICY_HOSTED_LIKE, inline or @file) and its refusals, over real HTTP.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InMemoryPolicyBackend } from '@rx/backend';
import { parsePolicyServerConfig } from './config';
import { parseHostedLike } from './hosted-like.config';
import { api, futureResult, policyServerHarness } from './testing/policy-server.harness';

const harness = policyServerHarness();
afterEach(() => harness.close());

describe('hosted-like configuration', () => {
  it('is off unless set; inline JSON or @file; defaults for what the object leaves out', () => {
    expect(parsePolicyServerConfig({}).hostedLike).toBeNull();
    expect(parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: ' ' }).hostedLike).toBeNull();
    expect(parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: '{"refuse_model_seed":true}' }).hostedLike).toEqual({ refuse_model_seed: true, no_archive_route: false, faults: {} });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-hosted-like-'));
    try {
      const file = path.join(dir, 'hosted.json');
      fs.writeFileSync(file, JSON.stringify({ no_archive_route: true }));
      expect(parseHostedLike(`@${file}`)).toEqual({ refuse_model_seed: false, no_archive_route: true, faults: {} });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad object is one line naming the variable and the field', () => {
    expect(() => parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: '{"refuse_model_seed":"yes"}' })).toThrow(
      'policy-server configuration: RX_POLICY_HOSTED_LIKE is not a hosted-like configuration: refuse_model_seed: Expected boolean, received string',
    );
    expect(() => parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: '{"refuse_seed":true}' })).toThrow(/RX_POLICY_HOSTED_LIKE .*Unrecognized key\(s\) in object: 'refuse_seed'/);
    expect(() => parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: 'refuse' })).toThrow(/RX_POLICY_HOSTED_LIKE is not a hosted-like configuration: its JSON is not JSON/);
    expect(() => parsePolicyServerConfig({ RX_POLICY_HOSTED_LIKE: '@/nonexistent/hosted.json' })).toThrow(/cannot read \/nonexistent\/hosted.json \(ENOENT\)/);
  });
});

describe('hosted-like refusals', () => {
  const lora = (seed?: number) => ({ rank: 2, ...(seed === undefined ? {} : { seed }) });
  async function createModel(server: Awaited<ReturnType<typeof harness.serve>>, seed?: number): Promise<{ status: number; json: Record<string, unknown> }> {
    const session = await api(server, 'create_session', { sdk_version: 'test', tags: [] });
    return api(server, 'create_model', { session_id: session.json.session_id, model_seq_id: 0, base_model: 'rx-test/bigram', lora_config: lora(seed) });
  }

  it('refuse_model_seed: create_model with a seed is a 400 naming lora_config.seed; without one it is served', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend(), { hostedLike: { refuse_model_seed: true, no_archive_route: false, faults: {} } });
    const refused = await createModel(server, 7);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatch(/lora_config\.seed is not supported/);
    const served = await createModel(server);
    expect(served.status).toBe(200);
    expect(await futureResult(server, served.json.request_id)).toMatchObject({ model_id: expect.any(String) });
  });

  it('off: the same create_model with a seed is served', async () => {
    const server = await harness.serve(new InMemoryPolicyBackend());
    const served = await createModel(server, 7);
    expect(served.status).toBe(200);
  });
});
