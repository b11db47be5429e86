// @rx/backend/testing: test doubles for the policy backends (a faulting proxy in front of a Tinker-shaped server, a
// float32 wire round-trip); imported by tests and tools only. The in-memory backend is production (the policy
// server's `memory` model) and stays in @rx/backend.
export * from './fault-proxy';
export * from './float32-wire.backend';
