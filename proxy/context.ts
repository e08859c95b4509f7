import type { Logger } from 'pino';
import type { Tracing } from '../runtime/tracing.js';
import type { HubConfig } from '../shared/config.js';
import type { AgentDirectory } from './agents/agent-directory.js';
import type { ControlPlaneClient } from './control-plane-client.js';
import type { JweCodec } from './encryption/jwe-codec.js';
import type { ProxyMetrics } from './metrics.js';
import type { RequestRecorder } from './paid-call/request-recorder.js';
import type { UpstreamPools } from './paid-call/upstream.js';
import type { SellerCatalog } from './seller-catalog.js';

/** Everything the proxy's request handling is handed; built once at start-up. */
export type ProxyServices = {
  config: HubConfig;
  logger: Logger;
  controlPlane: ControlPlaneClient;
  catalog: SellerCatalog;
  agents: AgentDirectory;
  recorder: RequestRecorder;
  pools: UpstreamPools;
  metrics: ProxyMetrics;
  /** Decrypts encrypted requests and encrypts their responses, inline or on worker threads. */
  jwe: JweCodec;
  /** Key of the MPP challenge HMAC, the same on every proxy (derived from the internal token). */
  mppSecret: string;
  /** Spans of paid calls, exported over OTLP; undefined (no work at all) without `HUB_OTLP_ENDPOINT`. */
  tracing: Tracing | undefined;
};
