// Where the controller's HTTP server (bull-board, /metrics) listens: 127.0.0.1 for rx run, 0.0.0.0 only in service
// mode, HOST when set; and the server really binds there.
import { createRxMetrics } from '@rx/metrics';
import { controllerHttpHost, startControllerHttp } from './controller-http';

describe('controller HTTP binding', () => {
  it('binds loopback outside service mode, all interfaces in service mode, HOST whenever it is set', () => {
    expect(controllerHttpHost(undefined, 'rx-run')).toBe('127.0.0.1');
    expect(controllerHttpHost(undefined, 'service')).toBe('0.0.0.0');
    expect(controllerHttpHost('10.1.2.3', 'rx-run')).toBe('10.1.2.3');
    expect(controllerHttpHost('127.0.0.1', 'service')).toBe('127.0.0.1');
  });

  it('listens on the loopback address rx run gets', async () => {
    const metrics = createRxMetrics({ service: 'controller', defaultMetrics: false });
    const probes = { redis: async () => true, backend: async () => true, runId: () => null, phase: () => null, metrics };
    const http = await startControllerHttp(probes, { host: controllerHttpHost(undefined, 'rx-run'), port: 0, queues: [] });
    try {
      expect(http.url).toBe(`http://127.0.0.1:${http.port}`);
      expect((await fetch(`${http.url}/health`)).status).toBe(200);
    } finally {
      await http.close();
    }
  });
});
