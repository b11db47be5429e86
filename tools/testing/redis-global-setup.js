// Makes sure a real Redis answers for the integration tests. Uses REDIS_URL (default redis://127.0.0.1:6379);
// if nothing answers there and `redis-server` is on PATH, starts a private one on a free port and exports its URL.
const net = require('node:net');
const { spawn, spawnSync } = require('node:child_process');

function ping(url, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const u = new URL(url);
    const sock = net.connect({ host: u.hostname, port: Number(u.port || 6379) });
    const done = (ok) => { sock.destroy(); resolve(ok); };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => {
      const auth = u.password ? `AUTH ${decodeURIComponent(u.password)}\r\n` : '';
      sock.write(`${auth}PING\r\n`);
    });
    sock.on('data', (d) => { if (d.toString().includes('PONG')) done(true); });
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
    srv.on('error', reject);
  });
}

module.exports = async function redisGlobalSetup() {
  const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (await ping(url)) { process.env.REDIS_URL = url; return; }
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
    throw new Error(`No Redis answers at ${url} and redis-server is not on PATH: install Redis (apt-get install redis-server) or set REDIS_URL.`);
  }
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore', detached: false });
  globalThis.__RX_TEST_REDIS__ = child;
  const privateUrl = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) { if (await ping(privateUrl)) break; await new Promise((r) => setTimeout(r, 100)); }
  process.env.REDIS_URL = privateUrl;
};
