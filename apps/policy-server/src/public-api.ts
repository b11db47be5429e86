// @rx/policy-server: the policy server's deliberate public entry, for tools/ only (the chaos stack and the bench
// start it in a process of their own; the fuzzers start it in process). Apps and libs cannot import an app
// (@nx/enforce-module-boundaries); eslint.config.js allows this entry in tools/ and nowhere else.
// the routes that answer without the API key (deploy checks: the Kubernetes probes must be among them)
export { PUBLIC_PATHS } from './auth';
export { parsePolicyServerConfig, policyServerConfig, type PolicyServerConfig } from './config';
export { startPolicyServer, type PolicyServer, type PolicyServerOptions } from './policy-server';
