// A child's exit code once its output is read: 'exit' fires first (Node can fire it before the stdio pipes are
// drained), then 'close' once every holder of the pipes has closed them. A grandchild that inherited the pipes (a
// service the child started) can hold them past the child's exit, so 'close' alone can wait for ever: after 'exit',
// 'close' is awaited for at most graceMs.
import type { ChildProcess } from 'node:child_process';

export function childExit(child: ChildProcess, graceMs = 2000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    let closed = false;
    child.once('close', () => (closed = true));
    child.once('exit', (code, signal) => {
      if (closed) return resolve({ code, signal });
      const timer = setTimeout(() => resolve({ code, signal }), graceMs);
      child.once('close', () => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    });
  });
}
