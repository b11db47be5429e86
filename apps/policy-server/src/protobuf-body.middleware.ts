// Reads `Content-Type: application/x-protobuf` bodies (SDK 0.25's forward_backward) as bytes into req.body,
// inflating `Content-Encoding: zstd` (sent when client/config sets proto_compress_fwdbwd). Limits as for JSON:
// a body, compressed or not, over RX_POLICY_MAX_BODY_BYTES is 413.
import { PROTOBUF_CONTENT_TYPE, ZSTD_ENCODING, zstdDecompress } from '@rx/backend';
import type { RequestHandler } from 'express';
import type { PolicyServerConfig } from './config';

export function protobufBodyMiddleware(config: Pick<PolicyServerConfig, 'maxBodyBytes'>): RequestHandler {
  const limit = config.maxBodyBytes;
  return (req, res, next) => {
    if (!req.is(PROTOBUF_CONTENT_TYPE)) return next();
    const encoding = (req.get('content-encoding') ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity' && encoding !== ZSTD_ENCODING) {
      req.resume();
      res.status(415).json({ error: `unsupported Content-Encoding '${encoding}' (identity or zstd)` });
      return;
    }
    const tooLarge = (size: string): void => {
      res.status(413).json({ error: `request body of ${size} bytes exceeds the limit of ${limit} bytes (RX_POLICY_MAX_BODY_BYTES)` });
    };
    const parts: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (part: Buffer) => {
      if (refused) return;
      size += part.length;
      if (size > limit) {
        refused = true;
        tooLarge(`more than ${limit}`);
        return;
      }
      parts.push(part);
    });
    req.on('error', (err) => next(err));
    req.on('end', () => {
      if (refused) return;
      const raw = Buffer.concat(parts);
      if (encoding !== ZSTD_ENCODING) {
        req.body = raw;
        return next();
      }
      zstdDecompress(raw, limit).then(
        (inflated) => {
          req.body = Buffer.from(inflated.buffer, inflated.byteOffset, inflated.byteLength);
          next();
        },
        (err: unknown) => {
          if (err instanceof RangeError) tooLarge(`more than ${limit} (inflated)`);
          else res.status(400).json({ error: `request body is not valid zstd (${err instanceof Error ? err.message : String(err)})` });
        },
      );
    });
  };
}
