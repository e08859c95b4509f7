// A seller's API behind x402's own Express middleware (their packages, unmodified), paid through
// the x402 facilitator at <facilitator URL>: `GET /search` costs $0.01 in the chain's token, paid
// with `exact`; `GET /session/search` costs the same and offers `exact` and `batch-settlement`, as
// hub's 402 does for a seller taking sessions. The batch-settlement server scheme keeps its channels
// in x402's in-memory storage, with hub's channel terms (a day's withdraw delay; the receiver
// authorizer is the one x402's facilitator advertises), and x402's channel manager claims what it
// charged every <claim interval> seconds, as hub's control-plane does by default.
//
//   node --import tsx bench/servers/x402-express.ts <port> <facilitator URL> <chain file> <payTo> <claim interval s>
import { HTTPFacilitatorClient } from '@x402/core/server';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import type { Address } from 'viem';
import { readDeploymentFile } from '../../chain/deployment.js';
import { WITHDRAW_DELAY_SECONDS } from '../../control-plane/sessions/session-rail.js';

const [port, facilitatorUrl, chainFile, payTo, claimIntervalS] = process.argv.slice(2);
const chain = await readDeploymentFile(chainFile!);
const facilitator = new HTTPFacilitatorClient({ url: facilitatorUrl! });
const sessions = new BatchSettlementEvmScheme(payTo as Address, { withdrawDelay: WITHDRAW_DELAY_SECONDS });
const server = new x402ResourceServer(facilitator).register(chain.network, new ExactEvmScheme()).register(chain.network, sessions);

const price = { amount: '10000', asset: chain.token.address, extra: { name: chain.token.name, version: chain.token.version } };
const exact = { scheme: 'exact', network: chain.network, payTo: payTo!, price };
const app = express();
app.use(
  paymentMiddleware(
    {
      'GET /search': { accepts: exact, description: 'search' },
      'GET /session/search': { accepts: [exact, { ...exact, scheme: 'batch-settlement' }], description: 'search' },
    },
    server,
  ),
);
app.get(['/search', '/session/search'], (_req, res) => {
  res.json({ results: ['a', 'b'] });
});
app.get('/', (_req, res) => {
  res.json({ ok: true });
});
app.listen(Number(port), '127.0.0.1');

sessions
  .createChannelManager(facilitator, chain.network, chain.token.address)
  .start({ claimIntervalSecs: Number(claimIntervalS), onError: (err) => console.error('x402 channel manager:', err) });
