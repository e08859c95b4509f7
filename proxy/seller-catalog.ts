import type { Logger } from 'pino';
import type { DiscoveryCatalog, PaySeller, SellerManifest } from '../shared/contract.js';
import { ExpiringCache } from '../shared/expiring-cache.js';
import { normalizeHost } from '../shared/pay-host.js';
import { ChangeFeed, FollowsChanges } from './change-feed.js';
import type { ControlPlaneClient } from './control-plane-client.js';

export type { PaySeller };

/**
 * The proxy's view of the catalog, so that a request never costs a database query: sellers by
 * host (and each seller's manifest) are cached for a short TTL, and dropped as soon as the
 * control-plane reports the seller changed (polled every second). Unknown hosts are remembered
 * briefly too, so junk Host headers cannot hammer the control-plane. Concurrent misses for one
 * host share one lookup. The cache holds one entry per host and seller, never per request.
 */
export class SellerCatalog extends FollowsChanges {
  private readonly byHost: ExpiringCache<string, PaySeller | null>;
  private readonly pending = new Map<string, Promise<PaySeller | null>>();
  private readonly manifests: ExpiringCache<string, SellerManifest | null>;
  /** What each seller's discovery documents and its 402s' Bazaar extension are made from. */
  private readonly discoveries: ExpiringCache<string, Promise<DiscoveryCatalog | null>>;
  protected readonly changes: ChangeFeed;

  constructor(
    private readonly controlPlane: ControlPlaneClient,
    logger: Logger,
    private readonly options = { ttlMs: 10_000, unknownTtlMs: 2_000, pollMs: 500, maxHosts: 10_000 },
  ) {
    super();
    this.byHost = new ExpiringCache({ ttlMs: options.ttlMs, maxEntries: options.maxHosts });
    this.manifests = new ExpiringCache({ ttlMs: options.ttlMs, maxEntries: options.maxHosts });
    this.discoveries = new ExpiringCache({ ttlMs: options.ttlMs, maxEntries: options.maxHosts });
    this.changes = new ChangeFeed(
      async (since) => {
        const { now, sellerIds } = await controlPlane.call('sellersChangedSince', { since });
        return { now, ids: sellerIds };
      },
      (sellerIds) => {
        for (const id of sellerIds) this.evictSeller(id);
        // A seller that just appeared (or gained a hostname) may sit in the unknown-host cache.
        this.byHost.deleteWhere((seller) => seller === null);
      },
      { pollMs: options.pollMs, logger, what: 'catalog' },
    );
  }

  async resolve(hostHeader: string | undefined): Promise<PaySeller | null> {
    const host = normalizeHost(hostHeader);
    if (!host) return null;
    return this.lookup(host);
  }

  /**
   * The seller of a normalized host while its entry is fresh (null for a host known to be no
   * seller's), or undefined when it must be loaded: the hot path takes no promise for a hit.
   */
  cached(host: string): PaySeller | null | undefined {
    return this.byHost.get(host);
  }

  /** A normalized host's seller, from the cache or the control-plane. */
  lookup(host: string): PaySeller | null | Promise<PaySeller | null> {
    return this.cached(host) ?? this.load(host);
  }

  /** Reloads one seller now (after a 401 from its upstream, in case its secrets rotated). */
  async refresh(seller: PaySeller, hostHeader: string | undefined): Promise<PaySeller | null> {
    this.evictSeller(seller.id);
    return this.resolve(hostHeader);
  }

  async manifest(sellerId: string): Promise<SellerManifest | null> {
    const cached = this.manifests.get(sellerId);
    if (cached !== undefined) return cached;
    const value = await this.controlPlane.call('manifest', { sellerId });
    this.manifests.set(sellerId, value);
    return value;
  }

  /**
   * The seller's discovery catalog. Concurrent readers share one call (a crawler fetches the
   * documents side by side, and every 402 looks here), and a failed call is not kept.
   */
  discovery(sellerId: string): Promise<DiscoveryCatalog | null> {
    const cached = this.discoveries.get(sellerId);
    if (cached) return cached;
    const loading = this.controlPlane.call('discoveryCatalog', { sellerId });
    this.discoveries.set(sellerId, loading);
    loading.catch(() => {
      if (this.discoveries.get(sellerId) === loading) this.discoveries.delete(sellerId);
    });
    return loading;
  }

  size(): { hosts: number; manifests: number; pending: number } {
    return { hosts: this.byHost.size, manifests: this.manifests.size, pending: this.pending.size };
  }

  private load(host: string): Promise<PaySeller | null> {
    const inFlight = this.pending.get(host);
    if (inFlight) return inFlight;
    const lookup = this.controlPlane
      .call('sellerByHost', { host })
      .then((seller) => {
        this.byHost.set(host, seller, seller ? this.options.ttlMs : this.options.unknownTtlMs);
        return seller;
      })
      .finally(() => this.pending.delete(host));
    this.pending.set(host, lookup);
    return lookup;
  }

  private evictSeller(sellerId: string): void {
    this.byHost.deleteWhere((seller) => seller?.id === sellerId);
    this.manifests.delete(sellerId);
    this.discoveries.delete(sellerId);
  }
}
