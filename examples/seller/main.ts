import { createPageViewReporter, createUsageClient, MemoryAccountStore } from '../../sdk/index.js';
import { SqliteAccountStore } from '../../sdk/sqlite.js';
import { createSellerApp } from './app.js';
import { sellerConfigFromEnv } from './config.js';

// Runs the reference seller on its own: `node --import tsx examples/seller/main.ts`, configured by
// the environment variables listed in config.ts.
let config: ReturnType<typeof sellerConfigFromEnv>;
try {
  config = sellerConfigFromEnv(process.env);
} catch (err) {
  console.error(`seller: ${(err as Error).message}`);
  process.exit(1);
}

const store = config.dbFile ? new SqliteAccountStore(config.dbFile) : new MemoryAccountStore();
const usage = createUsageClient({
  ...config.hub,
  onOutage: (event) => console.error(`seller: usage API outage: ${event.type}`),
});
const pageViews = config.sellerId
  ? createPageViewReporter({ baseUrl: config.hub.baseUrl, apiKey: config.hub.apiKey, seller: config.sellerId })
  : undefined;
const server = createSellerApp({ ...config, store, usage, pageViews, onError: (err) => console.error('seller: handler failure:', err) });
server.listen(config.port, config.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  console.log(
    `seller: listening on http://${config.host}:${port}, service ${config.serviceSlug}, accounts ${config.dbFile ? `in ${config.dbFile}` : 'in memory'}`,
  );
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // Reports kept through an outage and queued page views get a last try before the process ends.
    server.close(() => void Promise.all([usage.close(), pageViews?.close(), store.close()]).then(() => process.exit(0)));
    server.closeIdleConnections();
  });
}
