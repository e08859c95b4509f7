import { Pool } from 'undici';
import type { HubConfig } from '../shared/config.js';

/** One keep-alive connection pool per upstream origin, created on first use. */
export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly config: HubConfig['proxy']) {}

  for(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: 256,
        keepAliveTimeout: 30_000,
        connectTimeout: this.config.connectTimeoutMs,
        headersTimeout: this.config.headersTimeoutMs,
        bodyTimeout: this.config.bodyTimeoutMs,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  size(): number {
    return this.pools.size;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => p.destroy())));
    this.pools.clear();
  }
}
