// node -r ./tools/register.js apps/sampler/src/main.ts
import 'reflect-metadata';
import { runBackendServiceMain } from '@rx/service-host';
import { loadSamplerConfig } from './config';
import { startSampler } from './sampler.app';

void runBackendServiceMain('sampler', loadSamplerConfig, startSampler);
