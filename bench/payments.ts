// npm run bench:payments — paid requests through the whole loop, and signature verification alone.
//
// Whole loop: challenge → pay (x402 exact, signed by the official x402 client) → verify → forward
// → settle on a local anvil chain. Payments are signed before the clock starts (signing is the
// agent's cost, not hub's); then the paid retries run with BENCH_CONCURRENCY (default 8) in
// flight, BENCH_PAYMENTS (default 200) in all, against hub on SQLite. Then bench/recover.ts
// compares native and pure-JS signer recovery in the same run.
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { localRail } from '../control-plane/payments/rail.js';
import { listen } from '../runtime/http-server.js';
import { withHubSignature } from '../sdk/node.js';
import { paymentRequiredBody } from '../sdk/payment-required.js';
import type { PaymentRequirements } from '../shared/payments/x402-wire.js';
import { seedPricedService } from '../test/helpers/catalog-seed.js';
import { startTestChain } from '../test/helpers/chain.js';
import { payRequest, startTestHub } from '../test/helpers/hub.js';
import { teardownRegistry } from './lib/teardown.js';

const total = Number(process.env.BENCH_PAYMENTS ?? 200);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const here = dirname(fileURLToPath(import.meta.url));

async function main() {
  const t = teardownRegistry();
  try {
    const chain = await startTestChain(t);
    const hub = await startTestHub(t, 'sqlite', {}, localRail(chain));

    const secrets = new Map<string, string>();
    const challenged = new Set<string>();
    const handler = withHubSignature(
      (_req: IncomingMessage, res: ServerResponse, { identity }) => {
        if (!challenged.has(identity.requestId)) {
          challenged.add(identity.requestId);
          res.writeHead(402, { 'content-type': 'application/json' });
          return res.end(JSON.stringify(paymentRequiredBody({ serviceSlug: 'search', usage: [{ meterSlug: 'calls', quantity: 1 }] })));
        }
        res.writeHead(200, {
          'content-type': 'application/json',
          'hub-usage': JSON.stringify([{ serviceSlug: 'search', meterSlug: 'calls', quantity: 1 }]),
        });
        res.end('{"ok":true}');
      },
      { secrets: (kid) => secrets.get(kid) },
    );
    const upstream = createServer((req, res) => void handler(req, res));
    const upstreamPort = await listen(upstream, 0, '127.0.0.1');
    t.teardown(() => upstream.close());

    const seller = await hub.seller({
      slug: 'bench',
      upstreamBaseUrl: `http://127.0.0.1:${upstreamPort}`,
      payToAddress: chain.accounts[2]!.address,
    });
    secrets.set(seller.kid, seller.secret);
    await seedPricedService(hub.cp.db, { organizationId: hub.organizationId, sellerId: seller.id, priceMicros: 10_000n });

    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(chain.accounts[3]!.privateKey as Hex) });
    client.setSpendControls({ allowedAssets: true });

    console.log(`signing ${total} payments…`);
    const paid: { path: string; header: string }[] = [];
    for (let i = 0; i < total; i++) {
      const path = `/search?i=${i}`;
      const res = await hub.pay('bench', path);
      const body = (await res.json()) as { accepts: PaymentRequirements[] };
      const payment = await client.createPaymentPayload({ x402Version: 2, resource: { url: path }, accepts: body.accepts } as never);
      paid.push({ path, header: Buffer.from(JSON.stringify(payment)).toString('base64') });
    }

    const latencies: number[] = [];
    let failures = 0;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < paid.length) {
          const { path, header } = paid[next++]!;
          const t0 = performance.now();
          const res = await payRequest(hub.proxyUrl, path, 'bench.pay.localhost', { headers: { 'payment-signature': header } });
          await res.arrayBuffer();
          latencies.push(performance.now() - t0);
          if (res.status !== 200 || !res.headers.get('hub-billing')?.includes('"settled"')) failures++;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
    console.log(`\nWhole paid loop (claim, verify, forward, settle on anvil), ${total} payments, ${concurrency} in flight, SQLite:\n`);
    console.log('| paid requests/s | p50 ms | p99 ms | failed |');
    console.log('|---:|---:|---:|---:|');
    console.log(`| ${(total / seconds).toFixed(1)} | ${pct(50).toFixed(1)} | ${pct(99).toFixed(1)} | ${failures} |`);
  } finally {
    await t.run();
  }

  console.log('\nSignature verification alone (bench/recover.ts):\n');
  console.log(execFileSync(process.execPath, ['--import', 'tsx', join(here, 'recover.ts'), '--seconds', '2'], { encoding: 'utf8' }));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench:payments failed: ${(err as Error).stack}`);
    process.exit(1);
  },
);
