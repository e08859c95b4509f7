import { useMemo, useState } from 'preact/hooks';
import { usdToMicros } from '../../../shared/money';
import { get } from '../api';
import { DailyChart } from '../components/chart';
import { useLoad } from '../components/load';
import { TableHead } from '../components/table-head';
import { percent, usd, when } from '../format';
import type { PageViews, Seller } from '../types';
import { dailyAnalytics } from './daily';

const RANGES = [7, 14, 30];
const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const money = (n: number) => `$${n < 1 ? n.toFixed(3) : n.toFixed(2)}`;

/** Analytics: pictures first (calls, revenue, success rate, wallets, page views per day), then the figures. */
export function Analytics({ seller }: { seller: Seller }) {
  const [days, setDays] = useState(14);
  const figures = useLoad(() => dailyAnalytics(seller.id, days, timeZone), `${seller.id}:${days}`);
  const views = useLoad(
    () => get<{ pageViews: PageViews }>(`/analytics/sellers/${seller.id}/page-views?days=${days}&timeZone=${encodeURIComponent(timeZone)}`),
    `${seller.id}:${days}`,
  );
  const perDay = figures.data?.perDay ?? [];
  const dates = useMemo(() => perDay.map((d) => d.date), [perDay]);
  const series = useMemo(
    () => ({
      calls: [
        { label: 'Calls', values: perDay.map((d) => d.calls), color: '#1d4ed8' },
        { label: 'Transactions', values: perDay.map((d) => d.transactions), color: '#047857' },
      ],
      // A float only as a position on the chart, never summed.
      revenue: [{ label: 'Revenue', values: perDay.map((d) => Number(d.revenueUsd)), color: '#047857' }],
      success: [{ label: 'Success rate', values: perDay.map((d) => (d.attempts ? d.transactions / d.attempts : 0)), color: '#7c3aed' }],
      wallets: [{ label: 'New wallets', values: perDay.map((d) => d.newWallets), color: '#b45309' }],
    }),
    [perDay],
  );
  const pv = views.data?.pageViews;
  const viewSeries = useMemo(
    () =>
      (['human', 'agent', 'crawler', 'unknown'] as const).map((kind, i) => ({
        label: kind,
        values: (pv?.perDay ?? []).map((d) => d[kind]),
        color: ['#1d4ed8', '#047857', '#b45309', '#6b7280'][i]!,
      })),
    [pv],
  );
  const total = figures.data?.total;

  return (
    <section>
      <div class="row spread">
        <h1>Analytics · {seller.name}</h1>
        <label class="inline">
          <span>Range</span>
          <select value={String(days)} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {RANGES.map((n) => (
              <option key={n} value={String(n)}>
                Last {n} days
              </option>
            ))}
          </select>
        </label>
      </div>
      {figures.error && <p class="form-error">{figures.error}</p>}
      {total && (
        <div class="tiles" data-testid="totals">
          <Tile label="Calls" value={String(total.calls)} />
          <Tile label="Revenue" value={usd(total.revenueUsd)} />
          <Tile label="Transactions" value={String(total.transactions)} />
          <Tile label="Success rate" value={percent(total.successRate)} />
          <Tile label="New wallets" value={String(total.newWallets)} />
        </div>
      )}
      {perDay.length > 0 && (
        <div class="charts">
          <DailyChart title="Calls and transactions" days={dates} series={series.calls} />
          <DailyChart title="Revenue (USD)" days={dates} series={series.revenue} format={money} />
          <DailyChart title="Success rate" days={dates} series={series.success} format={(n) => `${Math.round(n * 100)}%`} />
          <DailyChart title="New wallets" days={dates} series={series.wallets} />
          {pv && <DailyChart title="Page views by viewer class" days={pv.perDay.map((d) => d.date)} series={viewSeries} />}
        </div>
      )}
      {total && usdToMicros(total.sessionRevenue.chargedUsd) > 0n && (
        <>
          <h2>Sessions</h2>
          <p>
            What calls paid from payers’ channels charged, by how far the money has moved: each voucher is claimed on chain in batches, then
            sent to your wallet.
          </p>
          <div class="tiles" data-testid="session-revenue">
            <Tile label="Charged" value={usd(total.sessionRevenue.chargedUsd)} />
            <Tile label="Not claimed yet" value={usd(total.sessionRevenue.unclaimedUsd)} />
            <Tile label="Claimed" value={usd(total.sessionRevenue.claimedUsd)} />
            <Tile label="In your wallet" value={usd(total.sessionRevenue.settledUsd)} />
          </div>
        </>
      )}
      <h2>Recent transactions</h2>
      <table data-testid="transactions">
        <TableHead columns={['When', 'Kind', 'Status', 'Amount', 'Paid by']} />
        <tbody>
          {(total?.recentTransactions ?? []).map((t) => (
            <tr key={t.id}>
              <td>{when(t.createdAt)}</td>
              <td>{t.kind}</td>
              <td>{t.status}</td>
              <td>{usd(t.amountUsd)}</td>
              <td>
                <code>{t.agent?.walletAddress ?? t.paymentMethod}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {pv && (
        <>
          <h2>Page views</h2>
          <p>
            {pv.views} views: {pv.byClass.human} by people, {pv.byClass.agent} by agents, {pv.byClass.crawler} by crawlers.
          </p>
          <table>
            <TableHead columns={['Path', 'Views']} />
            <tbody>
              {pv.topPaths.map((p) => (
                <tr key={p.value}>
                  <td>
                    <code>{p.value}</code>
                  </td>
                  <td>{p.views}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function Tile({ label, value }: { label: string; value: string }) {
  return (
    <div class="tile">
      <span>{label}</span>
      <strong>{value}</strong>
    </div>
  );
}
