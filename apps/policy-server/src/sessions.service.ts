// Start-up and sessions: client/config (what the SDK may send this server), dynamic_config, create_session and
// session_heartbeat. A session owns the training models and sampling sessions created in it.
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { createSessionRequestSchema, sessionHeartbeatRequestSchema } from '@rx/backend';
import { z } from 'zod';
import { apiError, parseRequest } from './api-error';
import { PolicyServerContext } from './policy-server.context';

@Injectable()
export class SessionsService {
  private readonly sessions = new Map<string, { createdAt: number; lastHeartbeatAt: number }>();

  constructor(private readonly ctx: PolicyServerContext) {}

  clientConfig(body: unknown): Record<string, unknown> {
    parseRequest('client/config', z.object({ sdk_version: z.string() }), body);
    return {
      pjwt_auth_enabled: false,
      // forward_backward bodies may come zstd-compressed (protobufBodyMiddleware inflates them)
      proto_compress_fwdbwd: true,
      parallel_fwdbwd_chunks: false,
      // the SDK's optional Rust transport is not needed against a local server
      use_pyqwest_transport: false,
      // create_training_client_from_state goes through weights_info, create_model, load_weights
      create_model_via_load_weights: false,
      fwdbwd_max_chunk_len: this.ctx.config.fwdbwdMaxChunkLen,
      fwdbwd_max_chunk_bytes_count: Math.max(1024, Math.floor(this.ctx.config.maxBodyBytes / 2)),
    };
  }

  dynamicConfig(): Record<string, unknown> {
    return { refresh_interval_sec: 300 };
  }

  createSession(body: unknown, key: string | undefined): Promise<Record<string, unknown>> {
    parseRequest('create_session', createSessionRequestSchema, body);
    return this.ctx.idempotency.run('create_session', key, async () => {
      const sessionId = randomUUID();
      this.sessions.set(sessionId, { createdAt: Date.now(), lastHeartbeatAt: Date.now() });
      return { session_id: sessionId, type: 'create_session' };
    });
  }

  heartbeat(body: unknown): Record<string, unknown> {
    const { session_id } = parseRequest('session_heartbeat', sessionHeartbeatRequestSchema, body);
    const session = this.sessions.get(session_id);
    if (!session) throw apiError(404, `unknown session_id '${session_id}'`);
    session.lastHeartbeatAt = Date.now();
    return { type: 'session_heartbeat' };
  }

  /** 404 unless `sessionId` came from create_session (and was not lost since) */
  requireSession(sessionId: string): void {
    if (!this.sessions.has(sessionId)) throw apiError(404, `unknown session_id '${sessionId}'; call create_session first`);
  }

  /** hosted-like lost sessions: every session is forgotten; answers their ids (their models and samplers go too) */
  loseAll(): Set<string> {
    const lost = new Set(this.sessions.keys());
    this.sessions.clear();
    return lost;
  }
}
