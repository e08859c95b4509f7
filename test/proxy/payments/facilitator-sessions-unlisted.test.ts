import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { HttpFacilitator } from '../../../control-plane/facilitator/http-facilitator.js';
import { remoteRail } from '../../../control-plane/payments/rail.js';
import type { PaymentRequirements } from '../../../shared/payments/x402-wire.js';
import { chainReader } from '../../helpers/chain.js';
import { remoteSessionsSettings, startX402FacilitatorServer } from '../../helpers/facilitator-server.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

// A remote facilitator that does not take batch-settlement (x402's own, with only its `exact`
// scheme registered), though the operator set hub's receiver authorizer key: hub's 402 does not
// offer sessions it could not deposit, claim or settle (docs/decisions.md#D-361). On SQLite only:
// what the 402 offers does not depend on the database.

t.setTimeout(120_000);

t.test('sessions are not offered on a facilitator whose /supported does not list them', async (t) => {
  let supportedAsked = 0;
  const world = await startPaidWorld(t, 'sqlite', {
    escrow: false,
    rail: async (chain) => {
      const url = await startX402FacilitatorServer(t, chain, (route) => {
        if (route === 'supported') supportedAsked++;
      });
      const rail = remoteRail(remoteSessionsSettings(chain, url), 'live');
      t.teardown(() => (rail.facilitator as HttpFacilitator).close());
      return rail;
    },
  });
  const { api, chain, hub, sellerId, served, url } = world;
  t.ok(world.rail.sessions, 'the rail is set up for sessions');
  t.equal((await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { x402Schemes: ['exact', 'batch-settlement'] })).status, 200);
  const asked = supportedAsked;

  for (const n of [1, 2, 3]) {
    const res = await fetch(url(`/search?q=unlisted-${n}`));
    t.equal(res.status, 402);
    const { accepts } = (await res.json()) as { accepts: PaymentRequirements[] };
    t.same(
      accepts.map((a) => a.scheme),
      ['exact'],
      `402 #${n}: exact alone`,
    );
    const header = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8'));
    t.same(
      header.accepts.map((a: PaymentRequirements) => a.scheme),
      ['exact'],
      'the header too',
    );
  }
  t.ok(supportedAsked - asked <= 1, `the facilitator’s /supported asked at most once for three 402s (${supportedAsked - asked})`);

  // x402's client registered for batch-settlement only finds nothing it can pay: nothing is sent, nothing served.
  const scheme = new BatchSettlementEvmScheme(
    toClientEvmSigner(privateKeyToAccount(chain.accounts[3]!.privateKey as Hex), chainReader(chain)),
  );
  const client = new x402Client();
  client.register(chain.network, scheme);
  client.setSpendControls({ allowedAssets: true });
  const servedBefore = served.length;
  await t.rejects(wrapFetchWithPayment(fetch, client)(url('/search?q=unlisted-session')), 'the client has no offer it takes');
  t.equal(served.length, servedBefore, 'nothing forwarded');
});
