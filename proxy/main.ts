import type { Server } from 'node:http';
import { closeServer, listen } from '../runtime/http-server.js';
import { createLogger } from '../runtime/logger.js';
import { resolveInternalToken, resolveMasterKey } from '../runtime/secrets.js';
import { loadConfig } from '../shared/config.js';
import { createProxy } from './create.js';
import { createMetricsServer } from './metrics-server.js';
import { answerMetricsAsks, isProxyWorker, onSiblingNote } from './worker-channel.js';

/**
 * Starts the proxy (the pay URL, and its metrics port if set). It keeps no durable state: any
 * number can run. As one of several workers sharing the port (cli/proxy-workers.ts) it leaves the
 * metrics port to the primary, which asks each worker for its counters, and hears its siblings'
 * changes.
 */
export async function startProxy(env: Record<string, string | undefined> = process.env) {
  const config = loadConfig(env);
  const logger = createLogger('proxy', config.logLevel);
  const internalToken = config.internalToken ?? resolveInternalToken(config, resolveMasterKey(config));
  const proxy = createProxy(config, logger, internalToken);
  const port = await listen(proxy.server, config.proxy.port, config.host);
  let metricsServer: Server | undefined;
  let metricsPort: number | undefined;
  if (isProxyWorker()) {
    answerMetricsAsks(proxy.services.metrics);
    onSiblingNote((note) => proxy.services.agents.forget(note.agentId));
  } else if (config.proxy.metricsPort !== undefined) {
    metricsServer = createMetricsServer(() => proxy.services.metrics.render(), config, logger);
    metricsPort = await listen(metricsServer, config.proxy.metricsPort, config.host);
  }
  logger.info(
    { port, metricsPort, host: config.host, payDomain: config.payDomain, controlPlane: config.controlPlane.url },
    'proxy listening',
  );
  const stop = () => Promise.all([proxy.stop(), metricsServer && closeServer(metricsServer)]).then(() => undefined);
  return { ...proxy, stop, port, metricsPort, logger };
}
