import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import t from 'tap';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestChain, tokenBalance } from '../../helpers/chain.js';
import { x402ReferenceFacilitator } from '../../helpers/facilitator-server.js';
import { localFacilitatorFor } from '../../helpers/local-facilitator.js';
import { requirementsFor, signPayment } from '../../helpers/sign-payment.js';

/**
 * The official x402 code on both sides of HubUSD: payments made by `@x402/core`'s client with
 * `@x402/evm`'s exact scheme settle through hub's LocalFacilitator, and hub-style payments settle
 * through `@x402/evm`'s own facilitator, which calls the token exactly as it calls USDC.
 */

t.setTimeout(120_000);

const chain = await startTestChain(t);
const payerAccount = privateKeyToAccount(chain.accounts[2]!.privateKey);
const payee = chain.accounts[3]!.address;

/** What an x402 client gets in PAYMENT-REQUIRED, for our token. */
function paymentRequired(amount: string) {
  return { x402Version: 2, resource: { url: 'http://127.0.0.1/paid' }, accepts: [requirementsFor(chain, payee, { amount })] };
}

t.test('a payment from the official x402 client settles through LocalFacilitator', async (t) => {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payerAccount });
  // The client pays only tokens it knows unless told otherwise; HubUSD is ours.
  client.setSpendControls({ allowedAssets: true });
  const required = paymentRequired('25000');
  const payment = await client.createPaymentPayload(required);
  t.match(payment, {
    x402Version: 2,
    accepted: required.accepts[0],
    payload: { authorization: { from: payerAccount.address, to: payee, value: '25000' } },
  });

  const facilitator = localFacilitatorFor(t, chain);
  const before = await tokenBalance(chain, payee);
  // Through JSON, as it arrives in the PAYMENT-SIGNATURE header.
  const wire = JSON.parse(JSON.stringify(payment));
  t.same(await facilitator.verify(wire, required.accepts[0]!), { isValid: true, payer: payerAccount.address });
  t.match(await facilitator.settle(wire, required.accepts[0]!), { status: 'settled', amount: '25000' });
  t.equal(await tokenBalance(chain, payee), before + 25_000n);
});

t.test('x402’s own exact-EVM facilitator verifies and settles on HubUSD', async (t) => {
  const facilitator = x402ReferenceFacilitator(chain);

  const requirements = requirementsFor(chain, payee, { amount: '777' });
  const payment = await signPayment(chain, chain.accounts[2]!.privateKey, requirements);
  const before = await tokenBalance(chain, payee);
  t.match(await facilitator.verify(payment, requirements), { isValid: true });
  const settled = await facilitator.settle(payment, requirements);
  t.match(settled, { success: true, network: chain.network, transaction: /^0x[0-9a-f]{64}$/ });
  t.equal(await tokenBalance(chain, payee), before + 777n);
  // Without Multicall3 on the dev chain, x402 cannot diagnose why; it still refuses the replay.
  t.match(await facilitator.verify(payment, requirements), { isValid: false }, 'a replay does not verify');
});
