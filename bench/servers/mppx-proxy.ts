// The benchmark seller's API behind mppx's own Proxy (their package, unmodified): `GET
// /seller/search` costs $0.01 in the chain's token through mppx's EVM charge method, which
// verifies and settles through the x402 facilitator at <facilitator URL>.
//
//   node --import tsx bench/servers/mppx-proxy.ts <port> <facilitator URL> <chain file> <payTo> <upstream URL>
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
// mppx's Proxy routes with URLPattern, which Node has as a global only from version 23.
import 'urlpattern-polyfill';
import { charge } from 'mppx/evm/server';
import { Proxy as MppxProxy } from 'mppx/proxy';
import { Mppx } from 'mppx/server';
import { readDeploymentFile } from '../../chain/deployment.js';

const [port, facilitatorUrl, chainFile, payTo, upstreamUrl] = process.argv.slice(2);
const chain = await readDeploymentFile(chainFile!);

const mppx = Mppx.create({
  methods: [
    charge({
      currency: chain.token.address,
      chainId: chain.chainId,
      decimals: chain.token.decimals,
      recipient: payTo as `0x${string}`,
      authorization: { name: chain.token.name, version: chain.token.version },
      x402: { facilitator: facilitatorUrl! },
    }),
  ],
  realm: 'bench',
  secretKey: randomBytes(32).toString('hex'),
});

const proxy = MppxProxy.create({
  services: [{ id: 'seller', baseUrl: upstreamUrl!, routes: { 'GET /search': mppx.charge({ amount: '0.01' }) } }],
});
createServer(proxy.listener).listen(Number(port), '127.0.0.1');
