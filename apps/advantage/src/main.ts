// node -r ./tools/register.js apps/advantage/src/main.ts
import 'reflect-metadata';
import { runServiceMain } from '@rx/service-host';
import { startAdvantage } from './advantage.app';
import { loadAdvantageConfig } from './config';

void runServiceMain('advantage', loadAdvantageConfig, startAdvantage);
