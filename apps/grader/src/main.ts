// node -r ./tools/register.js apps/grader/src/main.ts
import 'reflect-metadata';
import { runServiceMain } from '@rx/service-host';
import { loadGraderConfig } from './config';
import { startGrader } from './grader.app';

void runServiceMain('grader', loadGraderConfig, startGrader);
