import { type Logger, pino } from 'pino';
import type { HubConfig } from '../shared/config.js';

export type { Logger };

/** One JSON line per event on stdout; `process` names which of hub's processes wrote it. */
export function createLogger(processName: string, level: HubConfig['logLevel']): Logger {
  return pino({
    level,
    base: { process: processName },
    // Never let a bearer token or a payment proof reach a log line.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["payment-signature"]',
        'req.headers["x-payment"]',
        '*.token',
        '*.apiKey',
        '*.secret',
      ],
      censor: '[redacted]',
    },
  });
}
