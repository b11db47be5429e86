export * from './fault-proxy';
export * from './float32-wire.backend';
export * from './in-memory-policy-backend';
