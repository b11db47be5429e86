export * from './fault-proxy';
export * from './in-memory-policy-backend';
