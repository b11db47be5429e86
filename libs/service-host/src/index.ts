// The host of a pipeline service: its validated environment, backend, Nest app (/health, /metrics), logger, and
// start-up and shutdown around its edge workers.
export * from './backend-from-config';
export * from './bootstrap-service';
export * from './health.controller';
export * from './instrumented-backend';
export * from './run-service-main';
export * from './rx-logger';
export * from './rx-service.module';
export * from './service-config';
export * from './service-runtime';
export * from './session-renewing.backend';
