#!/usr/bin/env node
// The policy server's entry point: the Tinker protocol subset over the embedded model (policy-server-main.ts).
import 'reflect-metadata';
import { loadEmbeddedBackend } from './backend.factory';
import { policyServerMain } from './policy-server-main';

policyServerMain((config) => loadEmbeddedBackend(config.dataDir));
