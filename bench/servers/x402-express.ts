// A seller's API behind x402's own Express middleware (their packages, unmodified), paid through
// the x402 facilitator at <facilitator URL>: `GET /search` costs $0.01 in the chain's token.
//
//   node --import tsx bench/servers/x402-express.ts <port> <facilitator URL> <chain file> <payTo>
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import { readDeploymentFile } from '../../chain/deployment.js';

const [port, facilitatorUrl, chainFile, payTo] = process.argv.slice(2);
const chain = await readDeploymentFile(chainFile!);
const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl! })).register(chain.network, new ExactEvmScheme());

const app = express();
app.use(
  paymentMiddleware(
    {
      'GET /search': {
        accepts: {
          scheme: 'exact',
          network: chain.network,
          payTo: payTo!,
          price: { amount: '10000', asset: chain.token.address, extra: { name: chain.token.name, version: chain.token.version } },
        },
        description: 'search',
      },
    },
    server,
  ),
);
app.get('/search', (_req, res) => {
  res.json({ results: ['a', 'b'] });
});
app.get('/', (_req, res) => {
  res.json({ ok: true });
});
app.listen(Number(port), '127.0.0.1');
