// TensorFlow.js on its WebAssembly backend, initialised once per process. The wasm binaries ship inside
// @tensorflow/tfjs-backend-wasm (no download); on this machine wasm (SIMD, one thread) is about 7x faster than
// the pure-JS cpu backend, and @tensorflow/tfjs-node would need a native library fetched at install time.
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import * as path from 'node:path';

let ready: Promise<void> | null = null;

/** Resolves once the wasm backend is active; every entry point of this lib awaits it. */
export function ensureTfWasm(): Promise<void> {
  if (!ready) {
    ready = (async () => {
      const dir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm'));
      setWasmPaths(dir + path.sep);
      const ok = await tf.setBackend('wasm');
      if (!ok) throw new Error('TensorFlow.js wasm backend failed to initialise');
      await tf.ready();
    })();
  }
  return ready;
}

export { tf };
