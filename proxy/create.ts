import type { Logger } from 'pino';
import { closeServer } from '../runtime/http-server.js';
import { startTracing } from '../runtime/trace-export.js';
import { upstreamAddressesOf } from '../runtime/upstream-addresses.js';
import type { HubConfig } from '../shared/config.js';
import { AgentDirectory } from './agents/agent-directory.js';
import { loopMarkOf } from './arrival/loop-mark.js';
import type { ProxyServices } from './context.js';
import { createControlPlaneClient } from './control-plane-client.js';
import { createJweCodec } from './encryption/jwe-codec.js';
import { ProxyMetrics } from './metrics.js';
import { RequestRecorder } from './paid-call/request-recorder.js';
import { UpstreamPools } from './paid-call/upstream.js';
import { mppSecret } from './payments/mpp.js';
import { SellerCatalog } from './seller-catalog.js';
import { createProxyServer } from './server.js';

/** Wires a proxy (server plus its caches and pools) without listening; `stop` undoes it all. */
export function createProxy(config: HubConfig, logger: Logger, internalToken: string) {
  const tracing = startTracing('hub-proxy', config.otlpEndpoint);
  const { client, close } = createControlPlaneClient(config.controlPlane.url, internalToken, { tracing });
  const services: ProxyServices = {
    config,
    logger,
    controlPlane: client,
    catalog: new SellerCatalog(client, logger),
    agents: new AgentDirectory(client, undefined, logger),
    recorder: new RequestRecorder(client, logger),
    pools: new UpstreamPools(config.proxy, upstreamAddressesOf(config), loopMarkOf(internalToken)),
    metrics: new ProxyMetrics(),
    jwe: createJweCodec(config.proxy.jweMode, config.proxy.jweThreads),
    mppSecret: mppSecret(internalToken),
    tracing,
  };
  services.catalog.start();
  services.agents.start();
  const server = createProxyServer(services);
  const stop = async () => {
    await closeServer(server);
    services.catalog.stop();
    services.agents.stop();
    await services.recorder.drain();
    await services.pools.close();
    await services.jwe.close();
    await close();
    await tracing?.stop();
  };
  return { server, services, stop };
}
