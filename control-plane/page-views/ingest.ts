import type { Logger } from 'pino';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import { writePageViews } from '../analytics/page-view-rollup.js';
import { type Db, databaseIsReachable } from '../db/client.js';
import { type RateLimit, rateLimit } from '../limits/shared-rate-window.js';
import { PageViewSink } from './sink.js';

/**
 * What page-view reports need beyond the request: the write buffer, each organization's budget
 * per minute (`HUB_PAGE_VIEWS_PER_MINUTE`, shared by every control-plane on PostgreSQL), and which organization a seller belongs to, cached
 * (sellers do not change organization) so a report costs no database read.
 */
export class PageViewIntake {
  readonly sink: PageViewSink;
  readonly budget: RateLimit;
  private readonly owners = new ExpiringCache<string, string | null>({ ttlMs: 60_000, maxEntries: 10_000 });

  constructor(
    private readonly db: Db,
    logger: Logger,
    perMinute: number,
  ) {
    this.sink = new PageViewSink(
      (rows) => writePageViews(db, rows),
      logger,
      undefined,
      () => databaseIsReachable(db),
    );
    this.budget = rateLimit(db, 'page-views', perMinute);
  }

  async sellerOrganization(sellerId: string): Promise<string | null> {
    const cached = this.owners.get(sellerId);
    if (cached !== undefined) return cached;
    const seller = await this.db.seller.findUnique({ where: { id: sellerId }, select: { organizationId: true } });
    this.owners.set(sellerId, seller?.organizationId ?? null);
    return seller?.organizationId ?? null;
  }
}
