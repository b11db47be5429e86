// The grader with the deterministic hash-chain test policy in its process instead of RX_BACKEND_URL's backend:
// node -r ./tools/register.js apps/grader/testing/hash-chain.main.ts (tests and tools start it through
// ServiceSupervisor's entry). Its weights travel inside the paths it hands out, so four services make one pipeline.
import 'reflect-metadata';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { runServiceMain } from '@rx/service-host';
import { loadGraderConfig } from '../src/config';
import { startGrader } from '../src/grader.app';

process.env.RX_BACKEND_URL ??= 'memory://hash-chain';
void runServiceMain('grader', loadGraderConfig, startGrader, () => new HashChainPolicyBackend());
