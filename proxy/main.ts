import { listen } from '../runtime/http-server.js';
import { createLogger } from '../runtime/logger.js';
import { resolveInternalToken, resolveMasterKey } from '../runtime/secrets.js';
import { loadConfig } from '../shared/config.js';
import { createProxy } from './create.js';

/** Starts the proxy (the pay URL). It keeps no durable state: any number can run. */
export async function startProxy(env: Record<string, string | undefined> = process.env) {
  const config = loadConfig(env);
  const logger = createLogger('proxy', config.logLevel);
  const internalToken = config.internalToken ?? resolveInternalToken(config, resolveMasterKey(config));
  const proxy = createProxy(config, logger, internalToken);
  const port = await listen(proxy.server, config.proxy.port, config.host);
  logger.info({ port, host: config.host, payDomain: config.payDomain, controlPlane: config.controlPlane.url }, 'proxy listening');
  return { ...proxy, port, logger };
}
