// retrieve_future: long-polls a request's future, then answers its result, try_again, or `{error, category}`.
import { Injectable } from '@nestjs/common';
import { encodeForwardBackwardOutput, encodeSampleResponse, retrieveFutureRequestSchema, type ForwardBackwardOutput, type SampleResponse } from '@rx/backend';
import { apiError, parseRequest } from './api-error';
import { PolicyServerContext } from './policy-server.context';

/** A retrieve_future answer: JSON, or protobuf bytes for a client that accepts them. */
export type RetrievedFuture = { json: unknown } | { protobuf: Uint8Array };

@Injectable()
export class FuturesService {
  constructor(private readonly ctx: PolicyServerContext) {}

  /**
   * Sample and forward/backward results go out as protobuf when the client accepts it (SDK >= 0.18.1; 0.25 accepts
   * nothing else), as JSON otherwise.
   */
  async retrieveFuture(body: unknown, acceptsProtobuf = false): Promise<RetrievedFuture> {
    const { config, futures, protobufResults } = this.ctx;
    const req = parseRequest('retrieve_future', retrieveFutureRequestSchema, body);
    const outcome = await futures.wait(req.request_id, config.longPollMs);
    switch (outcome.status) {
      case 'unknown':
        throw apiError(404, `unknown request_id '${req.request_id}'`);
      case 'expired':
        throw apiError(410, `the result of '${req.request_id}' has expired (kept ${config.futureTtlMs} ms)`);
      case 'pending':
        return { json: { type: 'try_again', request_id: req.request_id, queue_state: 'active' } };
      case 'failed':
        return { json: { error: outcome.error, category: outcome.category } };
      case 'done': {
        const result = outcome.result;
        const kind = acceptsProtobuf && result && typeof result === 'object' ? protobufResults.get(result) : undefined;
        if (kind === 'sample') return { protobuf: encodeSampleResponse(result as SampleResponse) };
        if (kind === 'forward_backward') return { protobuf: encodeForwardBackwardOutput(result as ForwardBackwardOutput) };
        return { json: result };
      }
    }
  }
}
