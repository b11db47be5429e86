// @rx/backend/testing: test doubles for the policy backends, imported by tests, test entry points and tools only
// (production code cannot: eslint.config.js): the in-memory bigram (InMemoryPolicyBackend), the pipeline's
// deterministic hash-chain policy (HashChainPolicyBackend), a faulting proxy in front of a Tinker-shaped server,
// and a float32 wire round-trip.
export * from './fault-proxy';
export * from './float32-wire.backend';
export * from './hash-chain-policy.backend';
export * from './in-memory-policy-backend';
