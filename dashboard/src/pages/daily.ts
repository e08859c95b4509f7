import { formatUsd, usdToMicros } from '../../../shared/money';
import { get } from '../api';
import type { SellerAnalytics } from '../types';

/** One day's figures, of the seller's analytics record. */
export type Day = { date: string; calls: number; transactions: number; revenueUsd: string; newWallets: number; attempts: number };

/**
 * Daily figures from the API's one record: it counts the last `days` days, today included, and
 * its counts add up over days, so the record for k days less the one for k − 1 days is day k
 * (docs/decisions.md#D-236). The records are asked for side by side.
 */
export async function dailyAnalytics(sellerId: string, days: number, timeZone: string) {
  const records = await Promise.all(
    Array.from({ length: days }, (_, i) =>
      get<{ analytics: SellerAnalytics }>(`/analytics/sellers/${sellerId}?days=${i + 1}&timeZone=${encodeURIComponent(timeZone)}`).then(
        (answer) => answer.analytics,
      ),
    ),
  );
  const perDay: Day[] = records.map((record, i) => {
    const before = records[i - 1];
    const minus = (field: 'calls' | 'transactions' | 'newWallets' | 'attempts') => record[field] - (before?.[field] ?? 0);
    return {
      date: dateDaysAgo(i, timeZone),
      calls: minus('calls'),
      transactions: minus('transactions'),
      newWallets: minus('newWallets'),
      attempts: minus('attempts'),
      // Exact: the amounts as integer micro-dollars, with hub's own money module.
      revenueUsd: formatUsd(usdToMicros(record.revenueUsd) - usdToMicros(before?.revenueUsd ?? '0')),
    };
  });
  return { total: records[records.length - 1]!, perDay: perDay.reverse() };
}

/** The date `n` days before today in `timeZone`, as YYYY-MM-DD. */
function dateDaysAgo(n: number, timeZone: string): string {
  const at = new Date(Date.now() - n * 86_400_000);
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}
