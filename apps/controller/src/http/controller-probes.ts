// What the controller's HTTP endpoints read: liveness of Redis and the backend, the run it drives, its metrics.
import type { RxMetrics } from '@rx/metrics';

export interface ControllerProbes {
  redis(): Promise<boolean>;
  backend(): Promise<boolean>;
  runId(): string | null;
  phase(): string | null;
  metrics: RxMetrics;
}
