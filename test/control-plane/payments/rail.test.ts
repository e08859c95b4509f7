import t from 'tap';
import type { HttpFacilitator } from '../../../control-plane/facilitator/http-facilitator.js';
import { resolvePaymentRail } from '../../../control-plane/payments/rail.js';
import type { HubConfig } from '../../../shared/config.js';
import { startTestChain } from '../../helpers/chain.js';
import { startX402FacilitatorServer } from '../../helpers/facilitator-server.js';
import { requirementsFor, signPayment } from '../../helpers/sign-payment.js';

/** The remote rail as the environment configures it, against x402's own facilitator on a local chain. */

t.setTimeout(60_000);

const chain = await startTestChain(t);
const facilitatorUrl = await startX402FacilitatorServer(t, chain);
const remote = {
  HUB_FACILITATOR_URL: facilitatorUrl,
  HUB_PAYMENT_NETWORK: chain.network,
  HUB_PAYMENT_TOKEN_ADDRESS: chain.token.address,
  HUB_PAYMENT_TOKEN_NAME: chain.token.name,
  HUB_PAYMENT_TOKEN_VERSION: chain.token.version,
};
const config = { chainFile: '/nonexistent' } as HubConfig;

async function railOf(env: Record<string, string>) {
  const rail = await resolvePaymentRail(config, env);
  if (!rail) throw new Error('a remote rail was configured');
  t.teardown(() => (rail.facilitator as HttpFacilitator).close());
  return rail;
}

t.test('HUB_PAYMENT_RPC_URL lets the remote rail read the chain for what its facilitator cannot tell', async (t) => {
  const requirements = requirementsFor(chain, chain.accounts[3]!.address, { amount: '2500' });
  const payment = await signPayment(chain, chain.accounts[2]!.privateKey, requirements);

  const blind = await railOf(remote);
  t.equal(blind.readsChain, false, 'without it, parked settlements stay parked');
  const settled = await blind.facilitator.settle(payment, requirements);
  t.match(settled, { status: 'settled' });
  t.match(await blind.facilitator.settle(payment, requirements), { status: 'pending', unresolvable: true }, 'settled again: cannot tell');

  const reading = await railOf({ ...remote, HUB_PAYMENT_RPC_URL: chain.rpcUrl });
  t.equal(reading.readsChain, true, 'the pending loop looks at parked settlements again');
  t.match(await reading.facilitator.settle(payment, requirements), {
    status: 'settled',
    transaction: (settled as { transaction: string }).transaction,
    alreadySettled: true,
  });
});

t.test('an RPC URL must be one, on an EVM network', async (t) => {
  await t.rejects(
    resolvePaymentRail(config, { ...remote, HUB_PAYMENT_NETWORK: 'solana:mainnet', HUB_PAYMENT_RPC_URL: chain.rpcUrl }),
    /HUB_PAYMENT_RPC_URL needs an EVM HUB_PAYMENT_NETWORK/,
  );
  await t.rejects(resolvePaymentRail(config, { ...remote, HUB_PAYMENT_RPC_URL: 'localhost:8545' }), /must be an http\(s\) URL/);
});

t.test('the remote rail can take payments when its facilitator settles on the network', async (t) => {
  t.equal(await (await railOf(remote)).whyUnavailable?.(), undefined);
  t.equal(
    await (await railOf({ ...remote, HUB_PAYMENT_NETWORK: 'eip155:1' })).whyUnavailable?.(),
    'the facilitator does not settle on eip155:1',
  );
});
