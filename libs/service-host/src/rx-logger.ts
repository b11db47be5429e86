// One pino logger per process: JSON lines with the service name and an ISO time, secrets redacted by path
// (whatever object they sit in at these paths is logged as ***). Nest's own messages go through a child at
// warn level (nestjs-pino), so a service's stdout stays one event per line.
import pino, { type DestinationStream, type Logger } from 'pino';

/** where secrets sit in what rx logs: configs, request headers, backend payloads */
export const REDACTED_PATHS = [
  'TINKER_API_KEY',
  '*.TINKER_API_KEY',
  'RX_POLICY_API_KEY',
  '*.RX_POLICY_API_KEY',
  'apiKey',
  '*.apiKey',
  '*.api_key',
  '*.password',
  '*.token',
  '*.secret',
  '*.authorization',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'req.headers.cookie',
];

// the same mark as the configs' own redaction (service-config, Redis URLs)
export const REDACTED = '***';

export function createRxLogger(service: string, destination?: DestinationStream): Logger {
  return pino(
    {
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: REDACTED },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ fd: 1, sync: true }),
  );
}

/** a pino destination that hands each line (without its newline) to `write` */
export function lineDestination(write: (line: string) => void): DestinationStream {
  return { write: (chunk: string) => write(chunk.replace(/\n$/, '')) };
}
