#!/usr/bin/env node
// The policy server's entry point: the Tinker protocol subset over the embedded model (policy-server-main.ts).
import 'reflect-metadata';
import { EmbeddedBackend } from '@rx/embedded-model';
import { policyServerMain } from './policy-server-main';

policyServerMain(async (config) => new EmbeddedBackend({ dataDir: config.dataDir }));
