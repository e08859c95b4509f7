import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PageViewReporter } from './reporter.js';

/**
 * Wraps a `node:http` request handler so that the pages it serves are reported to hub:
 * `createServer(withPageViews(handler, reporter))`. The handler runs as before, with nothing
 * awaited on its way; the view is queued once the response has been sent.
 */
export function withPageViews<Req extends IncomingMessage, Res extends ServerResponse>(
  handler: (req: Req, res: Res) => unknown,
  reporter: PageViewReporter,
): (req: Req, res: Res) => unknown {
  return (req, res) => {
    reporter.track(req, res);
    return handler(req, res);
  };
}
