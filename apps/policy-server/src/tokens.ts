// Dependency-injection tokens of the policy server.
export const POLICY_SERVER_CONFIG = Symbol('POLICY_SERVER_CONFIG');
export const POLICY_BACKEND = Symbol('POLICY_BACKEND');
