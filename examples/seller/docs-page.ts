import type { ServerResponse } from 'node:http';

/**
 * The seller's public documentation page, served without a signature as any site's pages are:
 * what `GET /v1/agentify/markdown` turns into markdown for agents in the README.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Weather API</title></head>
<body>
  <nav><a href="/">Home</a> · <a href="/docs">Docs</a> · <a href="/status">Status</a></nav>
  <main>
    <article>
      <h1>Weather API</h1>
      <p>Forecasts for any place on earth, by the hour, for people and for software agents. Agents
        pay per call through the pay URL; there is nothing to sign up for.</p>
      <h2>Forecast</h2>
      <p>Call <code>GET /metered</code> for the next hour's forecast. The answer is JSON; each call
        costs one cent, charged only when the forecast is delivered.</p>
      <table>
        <thead><tr><th>Plan</th><th>Price</th></tr></thead>
        <tbody><tr><td>Pay per call</td><td>$0.01 a call</td></tr></tbody>
      </table>
      <p>Questions? Read the <a href="/docs/faq">FAQ</a>.</p>
    </article>
  </main>
  <footer>© Weather Inc.</footer>
</body>
</html>
`;

export function sendDocsPage(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(PAGE) }).end(PAGE);
}
