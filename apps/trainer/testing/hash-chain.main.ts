// The trainer with the deterministic hash-chain test policy in its process instead of RX_BACKEND_URL's backend:
// node -r ./tools/register.js apps/trainer/testing/hash-chain.main.ts (tests and tools start it through
// ServiceSupervisor's entry). Its weights travel inside the paths it hands out, so four services make one pipeline.
import 'reflect-metadata';
import { HashChainPolicyBackend } from '@rx/backend/testing';
import { runBackendServiceMain } from '@rx/service-host';
import { loadTrainerConfig } from '../src/config';
import { startTrainer } from '../src/trainer.app';

process.env.RX_BACKEND_URL ??= 'memory://hash-chain';
void runBackendServiceMain('trainer', loadTrainerConfig, startTrainer, () => new HashChainPolicyBackend());
