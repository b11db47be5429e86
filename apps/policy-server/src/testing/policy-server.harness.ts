// Tests of the policy server over real HTTP on 127.0.0.1: a server per test (closed after it), raw requests that
// go on the wire exactly as spelled (node:http, no URL normalisation), and the routes Express has registered.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { InMemoryPolicyBackend } from '@rx/backend/testing';
import { policyServerConfig, type PolicyServerConfig } from '../config';
import { startPolicyServer, type PolicyServer } from '../policy-server';

export interface Harness {
  serve(backend: InMemoryPolicyBackend, config?: Partial<PolicyServerConfig>): Promise<PolicyServer>;
  close(): Promise<void>;
}

/** Servers and temp dirs created through it are closed and removed by close() (call it in afterEach). */
export function policyServerHarness(): Harness {
  const cleanups: (() => Promise<void> | void)[] = [];
  return {
    async serve(backend, config = {}) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-policy-'));
      cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const server = await startPolicyServer(policyServerConfig({ port: 0, dataDir, longPollMs: 1000, ...config }), backend, { logger: false });
      cleanups.push(() => server.close());
      return server;
    },
    async close() {
      for (const c of cleanups.reverse()) await c();
      cleanups.length = 0;
    },
  };
}

export interface RawAnswer {
  status: number;
  body: string;
  json: Record<string, unknown>;
}

/** One request with `rawPath` sent verbatim; a JSON body for methods that carry one. */
export function rawRequest(server: PolicyServer, method: string, rawPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: server.port, method, path: rawPath, agent: false, headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Record<string, unknown> = {};
          try {
            json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
          } catch {
            json = {};
          }
          resolve({ status: res.statusCode ?? 0, body: text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** POST /api/v1/<name> with the key (when given). */
export function api(server: PolicyServer, name: string, body: unknown, key?: string): Promise<RawAnswer> {
  return rawRequest(server, 'POST', `/api/v1/${name}`, body, key ? { 'x-api-key': key } : {});
}

/** retrieve_future until the result is there. */
export async function futureResult(server: PolicyServer, requestId: unknown, key?: string): Promise<Record<string, unknown>> {
  for (;;) {
    const { json } = await api(server, 'retrieve_future', { request_id: requestId }, key);
    if (json.type !== 'try_again') return json;
  }
}

/** A session and a trained-nothing-yet model on the in-memory bigram. */
export async function newModel(server: PolicyServer, key?: string, lora: { rank: number; seed?: number } = { rank: 2, seed: 1 }): Promise<{ sessionId: string; modelId: string }> {
  const session = await api(server, 'create_session', { sdk_version: 'test', tags: [] }, key);
  const sessionId = session.json.session_id as string;
  const created = await api(server, 'create_model', { session_id: sessionId, model_seq_id: 0, base_model: 'rx-test/bigram', lora_config: lora }, key);
  if (created.status !== 200) throw new Error(`create_model answered ${created.status}: ${created.body}`);
  const done = await futureResult(server, created.json.request_id, key);
  return { sessionId, modelId: done.model_id as string };
}

export interface RegisteredRoute {
  method: string;
  path: string;
}

/** Every route Express has registered (from Nest's controllers), parameters filled with 'x'. */
export function registeredRoutes(server: PolicyServer): RegisteredRoute[] {
  const express = server.app.getHttpAdapter().getInstance() as { router?: { stack: unknown[] }; _router?: { stack: unknown[] } };
  const stack = (express.router ?? express._router)?.stack ?? [];
  const routes: RegisteredRoute[] = [];
  for (const layer of stack as Array<{ route?: { path: string; methods: Record<string, boolean> } }>) {
    if (!layer.route) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') routes.push({ method: method.toUpperCase(), path: layer.route.path.replace(/:[A-Za-z_]+/g, 'x') });
    }
  }
  return routes;
}
