// node -r ./tools/register.js apps/trainer/src/main.ts
import 'reflect-metadata';
import { runBackendServiceMain } from '@rx/service-host';
import { loadTrainerConfig } from './config';
import { startTrainer } from './trainer.app';

void runBackendServiceMain('trainer', loadTrainerConfig, startTrainer);
