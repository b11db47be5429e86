// Opt-in: the official Tinker Python SDK against this policy server, over every call of the RL loop
// (sdk-acceptance/drive_sdk.py). Runs when RX_TINKER_SDK_SRC names the SDK's `src` folder (with a
// tinker-<version>.dist-info/METADATA beside the package, which the SDK reads its version from), and skips with
// a message otherwise. Python dependencies: pydantic 2 and numpy, plus Debian's python3-httpx, python3-anyio,
// python3-protobuf and python3-zstandard (found through /usr/lib/python3/dist-packages, or RX_TINKER_PYTHONPATH).
// RX_TINKER_PYTHON picks the interpreter (default python3). See docs/tinker.md.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { policyServerConfig } from './config';
import { startPolicyServer } from './policy-server';

const sdkSrc = process.env.RX_TINKER_SDK_SRC;
const python = process.env.RX_TINKER_PYTHON ?? 'python3';
const extraPath = process.env.RX_TINKER_PYTHONPATH ?? '/usr/lib/python3/dist-packages';

interface CallResult {
  call: string;
  ok: boolean;
  detail: unknown;
}

const CALLS = [
  'get_server_capabilities',
  'create_lora_training_client',
  'forward_backward(importance_sampling) in several chunks',
  'optim_step',
  'save_weights_for_sampler',
  'save_weights_and_get_sampling_client',
  'create_sampling_client(model_path)',
  'sample with prompt logprobs',
  'compute_logprobs',
  'save_state',
  'load_state',
  'load_state_with_optimizer',
  'create_training_client_from_state',
  'create_training_client_from_state_with_optimizer',
  'forward',
  'a training call after a refused one',
  'version',
];

function runDriver(baseUrl: string): Promise<{ code: number | null; lines: CallResult[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [path.join(__dirname, 'sdk-acceptance', 'drive_sdk.py'), baseUrl], {
      cwd: os.tmpdir(),
      env: { ...process.env, PYTHONPATH: [extraPath, sdkSrc].join(path.delimiter), TINKER_TELEMETRY: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as CallResult);
      resolve({ code, lines, stderr: err.slice(-4000) });
    });
  });
}

if (!sdkSrc) {
  describe('the official Tinker SDK against the policy server', () => {
    it.skip('skipped: set RX_TINKER_SDK_SRC to the SDK source (see docs/tinker.md)', () => undefined);
  });
  console.warn('tinker-sdk.acceptance: skipped (RX_TINKER_SDK_SRC is not set; see docs/tinker.md)');
} else {
  describe('the official Tinker SDK against the policy server', () => {
    it(
      'runs every RL-loop call, over protobuf and zstd where the SDK uses them, and the server counts each step once',
      async () => {
        if (!fs.existsSync(path.join(sdkSrc, 'tinker', '__init__.py'))) throw new Error(`RX_TINKER_SDK_SRC=${sdkSrc} has no tinker/__init__.py`);
        const backend = new InMemoryPolicyBackend();
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-sdk-acceptance-'));
        const server = await startPolicyServer(policyServerConfig({ port: 0, dataDir, longPollMs: 5_000, fwdbwdMaxChunkLen: 2 }), backend, { logger: false });
        try {
          const { code, lines, stderr } = await runDriver(server.url);
          const failed = lines.filter((l) => !l.ok);
          expect({ code, failed, stderr: failed.length > 0 || code !== 0 ? stderr : '' }).toEqual({ code: 0, failed: [], stderr: '' });
          expect(lines.map((l) => l.call)).toEqual(CALLS);
          // each step ran once: 2 optim_steps, 2 loads each way; forward and forward_backward split the same 5 datums
          // into the same chunks (2 per chunk from 0.25, which reads fwdbwd_max_chunk_len; 0.24.1 sends one), and the
          // client made from state adds one forward_backward
          expect(backend.calls).toMatchObject({ optimStep: 2, loadState: 2, loadWeights: 2 });
          expect(backend.calls.forward).toBeGreaterThanOrEqual(1);
          expect(backend.calls.forwardBackward).toBe(backend.calls.forward + 1);
          console.log(`tinker SDK ${String(lines.at(-1)?.detail)}: ${lines.length - 1}/${CALLS.length - 1} calls ok`);
        } finally {
          await server.close();
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      },
      300_000,
    );
  });
}
