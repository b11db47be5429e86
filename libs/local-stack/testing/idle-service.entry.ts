// Entry point for the lifeline tests: a service that does nothing but stay up (an HTTP server), as a worker would.
import { createServer } from 'node:http';

const server = createServer((_req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ event: 'ready', url: `http://127.0.0.1:${port}` })}\n`);
});
