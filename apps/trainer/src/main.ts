// node -r ./tools/register.js apps/trainer/src/main.ts
import 'reflect-metadata';
import { runServiceMain } from '@rx/service-host';
import { loadTrainerConfig } from './config';
import { startTrainer } from './trainer.app';

void runServiceMain('trainer', loadTrainerConfig, startTrainer);
