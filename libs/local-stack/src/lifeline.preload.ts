// Loaded with `node -r` into every Node child that launchNodeChild starts: the child exits at once when its parent
// is gone, rather than consuming a run's queues as an orphan. A service started any other way (Docker, a
// terminal) has no lifeline and this does nothing.
import { watchLifeline } from './lifeline';

watchLifeline(() => {
  process.stderr.write(`${JSON.stringify({ level: 'warn', event: 'parent-gone', pid: process.pid, msg: 'the process that started this one is gone: exiting' })}\n`);
  process.exit(137);
});
