// Renders every error as JSON `{ "error": "…" }` with its status; unexpected errors are 500 and logged.
import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';

@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('policy-server');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const body = exception.getResponse();
      // our own errors are { error }; Nest's built-in ones ({ message, error: 'Not Found', statusCode }) are reduced to that
      const own = typeof body === 'object' && body !== null && 'error' in body && !('message' in body) && typeof body.error === 'string';
      res.status(status).json(own ? body : { error: exception.message });
      return;
    }
    const message = exception instanceof Error ? exception.message : String(exception);
    this.logger.error(exception instanceof Error ? (exception.stack ?? message) : message);
    res.status(500).json({ error: `internal server error: ${message}` });
  }
}
