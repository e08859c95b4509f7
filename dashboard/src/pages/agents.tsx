import { get } from '../api';
import { useLoad } from '../components/load';
import type { Discovery, Seller } from '../types';
import { TryIt } from './try-it';

/** What agents see: the pay URL, its 402 tried live, and the discovery documents it serves. */
export function Agents({ seller }: { seller: Seller }) {
  const discovery = useLoad(() => get<{ discovery: Discovery }>(`/sellers/${seller.id}/discovery`), seller.id);
  const d = discovery.data?.discovery;
  if (discovery.error) return <p class="form-error">{discovery.error}</p>;
  if (!d) return <p class="loading">Loading…</p>;
  return (
    <section>
      <h1>What agents see · {seller.name}</h1>
      <div class="card">
        <h2>Pay URL</h2>
        <p>
          <code data-testid="pay-url">{d.payUrl}</code>
        </p>
        <p class="hint">An unpaid call gets a 402 with the price in both protocols' headers: try one below.</p>
      </div>
      <TryIt sellerId={seller.id} />
      <div class="card">
        <h2>Listing</h2>
        {d.listing.complete ? (
          <p>Complete: agents find every route and price.</p>
        ) : (
          <ul>
            {d.listing.issues.map((issue) => (
              <li key={`${issue.code}:${issue.subject ?? ''}`}>
                {issue.subject && <code>{issue.subject}</code>} {issue.message}
              </li>
            ))}
          </ul>
        )}
      </div>
      <div class="card">
        <h2>
          <a href={d.documents.llmsTxt.url}>llms.txt</a>
        </h2>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls must be reachable by keyboard (axe: scrollable-region-focusable). */}
        <pre class="doc" tabIndex={0}>
          {d.documents.llmsTxt.body}
        </pre>
        <h2>
          <a href={d.documents.openapi.url}>openapi.json</a>
        </h2>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls must be reachable by keyboard (axe: scrollable-region-focusable). */}
        <pre class="doc" tabIndex={0}>
          {JSON.stringify(d.documents.openapi.body, null, 2)}
        </pre>
      </div>
    </section>
  );
}
