// The child's side of the lifeline (child-process.ts): the descriptor named by RX_LIFELINE_FD is the read end of a
// pipe only the parent writes to; EOF on it means the parent is gone, however it ended.
import { Socket } from 'node:net';

export const LIFELINE_FD_ENV = 'RX_LIFELINE_FD';

/**
 * Calls onParentGone once when the parent that started this process ends; false when this process was started
 * without a lifeline (a container, a terminal). The watch never keeps the process up.
 */
export function watchLifeline(onParentGone: () => void): boolean {
  const fd = Number(process.env[LIFELINE_FD_ENV]);
  // not handed on: a grandchild gets a lifeline of its own from its parent, or none
  delete process.env[LIFELINE_FD_ENV];
  if (!Number.isInteger(fd) || fd < 3) return false;
  let line: Socket;
  try {
    line = new Socket({ fd, readable: true, writable: false });
  } catch {
    return false;
  }
  let gone = false;
  const end = (): void => {
    if (gone) return;
    gone = true;
    onParentGone();
  };
  line.on('data', () => undefined);
  line.on('end', end);
  line.on('close', end);
  line.on('error', end);
  line.unref();
  return true;
}
