#!/usr/bin/env node
// The controller's entry point: rx run starts it (apps/cli), and a container runs it in service mode. What it does
// is controller-main.ts.
import 'reflect-metadata';
import { controllerMain } from './controller-main';

controllerMain();
