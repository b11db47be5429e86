// The policy server over the in-memory test bigram (@rx/backend/testing InMemoryPolicyBackend) instead of the
// embedded model: node -r ./tools/register.js apps/policy-server/testing/memory.main.ts. Tests only (protocol,
// start-up and shutdown of the real server code without loading a model).
import 'reflect-metadata';
import { InMemoryPolicyBackend } from '@rx/backend/testing';
import { policyServerMain } from '../src/policy-server-main';

policyServerMain(async () => new InMemoryPolicyBackend());
