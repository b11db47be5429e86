// The base checkpoint the embedded benchmarks run on: the committed models/char-lm when it exists, else
// random weights of the same shape (CHAR_LM_CONFIG), written to a temporary folder. The cost of a step depends
// on the shape and on how many tokens are sampled, not on the values; random weights rarely sample the stop
// token, so completions run closer to max_tokens and a step costs at least what the trained model's would.
import { CHAR_LM_CONFIG, DEFAULT_BASE_CHECKPOINT, initBaseParams, writeBaseCheckpoint } from '@rx/embedded-model';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface BenchCheckpoint {
  dir: string;
  /** how the benchmark describes it in BENCHMARKS.md */
  description: string;
  cleanup(): void;
}

export function benchCheckpoint(): BenchCheckpoint {
  if (existsSync(path.join(DEFAULT_BASE_CHECKPOINT, 'model.json'))) {
    return { dir: DEFAULT_BASE_CHECKPOINT, description: 'the committed base checkpoint models/char-lm', cleanup: () => undefined };
  }
  const root = mkdtempSync(path.join(os.tmpdir(), 'rx-bench-base-'));
  const dir = path.join(root, 'char-lm');
  writeBaseCheckpoint(dir, CHAR_LM_CONFIG, initBaseParams(CHAR_LM_CONFIG, 0), { bench: 'random weights of the char-lm shape' });
  const c = CHAR_LM_CONFIG;
  return {
    dir,
    description: `random weights of the char-lm shape (width ${c.width}, ${c.layers} layers, ${c.heads} heads, context ${c.context}; models/char-lm was not there yet)`,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
