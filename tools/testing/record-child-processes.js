// Test support, preloaded with NODE_OPTIONS="--require <this file>": appends one line per child process that a
// Node process starts (spawn, fork, exec, execFile and their Sync forms) to the file RX_TEST_CHILD_LOG, as
// "<pid of the parent> <command> <args...>". NODE_OPTIONS reaches every Node child too, so the log covers the tree.
const fs = require('node:fs');
const childProcess = require('node:child_process');

const log = process.env.RX_TEST_CHILD_LOG;
if (log) {
  for (const name of ['spawn', 'fork', 'exec', 'execFile', 'spawnSync', 'execSync', 'execFileSync']) {
    const original = childProcess[name];
    childProcess[name] = function recorded(command, args, ...rest) {
      const shown = [name === 'fork' ? `${process.execPath} ${command}` : command, ...(Array.isArray(args) ? args : [])].join(' ');
      fs.appendFileSync(log, `${process.pid} ${shown}\n`);
      return original.call(this, command, args, ...rest);
    };
  }
}
