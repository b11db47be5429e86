import { PolicyServerConfigError, parsePolicyServerConfig, policyServerConfigSchema } from './config';

describe('policy server configuration', () => {
  it('binds 127.0.0.1:8000 by default', () => {
    expect(parsePolicyServerConfig({})).toEqual({
      host: '127.0.0.1',
      port: 8000,
      dataDir: 'runs/policy-server',
      latencyMs: 0,
      maxBodyBytes: 16 * 1024 * 1024,
      maxTokensPerRequest: 262_144,
      longPollMs: 30_000,
      futureTtlMs: 600_000,
      fwdbwdMaxChunkLen: 1024,
      seqGapTimeoutMs: 120_000,
      shutdownGraceMs: 10_000,
      apiKey: undefined,
      maxModels: 128,
      maxLoraRank: 128,
      maxUnfetchedResults: 1024,
      maxUnfetchedResultBytes: 256 * 1024 * 1024,
      requestTimeoutMs: 60_000,
      headersTimeoutMs: 20_000,
      maxConnections: 512,
      publicUrl: null,
      hostedLike: null,
    });
    expect(policyServerConfigSchema.parse({ PORT: '0', HOST: '0.0.0.0', RX_POLICY_API_KEY: 'a-long-enough-key', RX_POLICY_LATENCY_MS: '25', PORT_UNUSED: 'x' })).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      latencyMs: 25,
    });
    expect(parsePolicyServerConfig({ PORT: '', RX_DATA_DIR: '  ' })).toMatchObject({ port: 8000, dataDir: 'runs/policy-server' });
  });

  it('names every bad variable in one line, never echoing the API key', () => {
    expect(() => parsePolicyServerConfig({ PORT: 'eighty' })).toThrow(new PolicyServerConfigError('policy-server configuration: PORT must be an integer >= 0'));
    expect(() => parsePolicyServerConfig({ PORT: '70000' })).toThrow('PORT must be at most 65535');
    let message = '';
    try {
      parsePolicyServerConfig({ RX_POLICY_LATENCY_MS: '-5', RX_POLICY_API_KEY: 'short' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toBe(
      "policy-server configuration: RX_POLICY_LATENCY_MS must be an integer >= 0; RX_POLICY_API_KEY must be at least 8 characters when set",
    );
    expect(message).not.toContain('short');
  });

  it('takes a public URL for the signed archive URLs (http or https, no query), without its trailing slash', () => {
    expect(parsePolicyServerConfig({ RX_POLICY_PUBLIC_URL: 'https://rx.example.org/tinker/' }).publicUrl).toBe('https://rx.example.org/tinker');
    expect(parsePolicyServerConfig({ RX_POLICY_PUBLIC_URL: ' ' }).publicUrl).toBeNull();
    expect(() => parsePolicyServerConfig({ RX_POLICY_PUBLIC_URL: 'rx.example.org' })).toThrow('policy-server configuration: RX_POLICY_PUBLIC_URL must be a URL (http:// or https://)');
    expect(() => parsePolicyServerConfig({ RX_POLICY_PUBLIC_URL: 'ftp://rx.example.org' })).toThrow('RX_POLICY_PUBLIC_URL must be an http:// or https:// URL');
    expect(() => parsePolicyServerConfig({ RX_POLICY_PUBLIC_URL: 'https://rx.example.org/?a=1' })).toThrow('RX_POLICY_PUBLIC_URL must have no query, fragment or credentials');
  });
});
