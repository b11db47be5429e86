// node -r ./tools/register.js apps/sampler/src/main.ts
import 'reflect-metadata';
import { runServiceMain } from '@rx/service-host';
import { loadSamplerConfig } from './config';
import { startSampler } from './sampler.app';

void runServiceMain('sampler', loadSamplerConfig, startSampler);
