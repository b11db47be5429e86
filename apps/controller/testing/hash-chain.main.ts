// The controller with the deterministic hash-chain test policy as its own backend (its services are started
// through their own apps/<service>/testing/hash-chain.main.ts): node -r ./tools/register.js
// apps/controller/testing/hash-chain.main.ts run ... --services external. Tests only.
import 'reflect-metadata';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { controllerMain } from '../src/controller-main';

controllerMain({ backendFor: () => new HashChainPolicyBackend() });
