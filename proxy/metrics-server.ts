import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { createHttpServer } from '../runtime/http-server.js';
import { sendError } from '../runtime/respond.js';
import type { HubConfig } from '../shared/config.js';
import { ApiError } from '../shared/errors.js';

const METRICS_PATH = '/metrics';

/**
 * The proxy's metrics, on a port of their own (`HUB_PROXY_METRICS_PORT`): the pay URL's port is
 * the public's, and what the proxy counts is the operator's. It serves `GET /metrics` and nothing
 * else; a scrape is not a request the proxy counts, nor one the access log repeats every few seconds.
 * `render` is one process's registry, or (cli/proxy-workers.ts) every worker's, gathered per scrape.
 */
export function createMetricsServer(render: () => string | Promise<string>, config: HubConfig, logger: Logger): Server {
  return createHttpServer(
    (req, res) => {
      const path = (req.url ?? '/').split('?', 1)[0]!;
      if (path !== METRICS_PATH) return void sendError(res, new ApiError('not_found'));
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return void sendError(res, new ApiError('method_not_allowed', `Use GET ${METRICS_PATH}.`));
      return Promise.resolve(render()).then((text) => {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        res.end(req.method === 'HEAD' ? undefined : text);
      });
    },
    config.requests,
    logger,
    { accessLog: false },
  );
}
