import type { Db } from '../db/client.js';

/**
 * Sellers whose catalog changed at or after `since` (ISO time). The proxy polls this to drop
 * stale cache entries; `now` is the control-plane's clock, to pass back as the next `since`
 * (a small overlap keeps a write committed during the query from being missed).
 */
export async function sellersChangedSince(db: Db, since: string | null): Promise<{ now: string; sellerIds: string[] }> {
  const now = new Date();
  if (!since) return { now: now.toISOString(), sellerIds: [] };
  const from = new Date(new Date(since).getTime() - 2_000);
  const rows = await db.seller.findMany({ where: { updatedAt: { gte: from } }, select: { id: true } });
  return { now: now.toISOString(), sellerIds: rows.map((r) => r.id) };
}
