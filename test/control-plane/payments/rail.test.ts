import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { writeDeploymentFile } from '../../../chain/deployment.js';
import type { HttpFacilitator } from '../../../control-plane/facilitator/http-facilitator.js';
import type { PaymentRail } from '../../../control-plane/payments/rail.js';
import { resolvePaymentRails } from '../../../control-plane/payments/rails.js';
import { ConfigError, type HubConfig } from '../../../shared/config.js';
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

/** The rails `env` configures, their remote facilitators closed when the test ends. */
async function railsOf(env: Record<string, string>, chainFile = config.chainFile) {
  const rails = await resolvePaymentRails({ ...config, chainFile }, env);
  for (const rail of [rails.live, rails.test])
    if (rail && 'close' in rail.facilitator) t.teardown(() => (rail.facilitator as HttpFacilitator).close());
  return rails;
}

async function railOf(env: Record<string, string>): Promise<PaymentRail> {
  const { live } = await railsOf(env);
  if (!live) throw new Error('a remote rail was configured');
  return live;
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
    resolvePaymentRails(config, { ...remote, HUB_PAYMENT_NETWORK: 'solana:mainnet', HUB_PAYMENT_RPC_URL: chain.rpcUrl }),
    /HUB_PAYMENT_RPC_URL needs an EVM HUB_PAYMENT_NETWORK/,
  );
  await t.rejects(resolvePaymentRails(config, { ...remote, HUB_PAYMENT_RPC_URL: 'localhost:8545' }), /must be an http\(s\) URL/);
});

t.test('the remote rail can take payments when its facilitator settles on the network', async (t) => {
  t.equal(await (await railOf(remote)).whyUnavailable?.(), undefined);
  t.equal(
    await (await railOf({ ...remote, HUB_PAYMENT_NETWORK: 'eip155:1' })).whyUnavailable?.(),
    'the facilitator does not settle on eip155:1',
  );
});

t.test('a test rail beside the live one: a remote one, or the local chain of HUB_CHAIN_FILE', async (t) => {
  const live = { ...remote, HUB_PAYMENT_NETWORK: 'eip155:8453' };
  const testRemote = {
    HUB_TEST_FACILITATOR_URL: facilitatorUrl,
    HUB_TEST_PAYMENT_NETWORK: chain.network,
    HUB_TEST_PAYMENT_TOKEN_ADDRESS: chain.token.address,
    HUB_TEST_PAYMENT_TOKEN_SYMBOL: 'HUSD',
    HUB_TEST_PAYMENT_RPC_URL: chain.rpcUrl,
  };
  const alone = await railsOf(live);
  t.match(alone, { live: { name: 'usdc', network: 'eip155:8453', test: false } }, 'a live rail alone');
  t.equal(alone.test, undefined);

  const remoteTest = await railsOf({ ...live, ...testRemote });
  t.match(remoteTest.live, { network: 'eip155:8453', test: false, readsChain: false });
  t.match(remoteTest.test, {
    name: 'test_husd',
    network: chain.network,
    test: true,
    readsChain: true,
    token: { address: chain.token.address },
  });
  t.equal(await remoteTest.test?.whyUnavailable?.(), undefined, 'its facilitator settles on its network');

  // The local chain as the test rail: only where HUB_CHAIN_FILE names it.
  const dir = mkdtempSync(join(tmpdir(), 'hub-rails-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const chainFile = join(dir, 'chain.json');
  await writeDeploymentFile(chainFile, chain);
  const local = await railsOf({ ...live, HUB_CHAIN_FILE: chainFile }, chainFile);
  t.match(local.test, { name: 'local_husd', network: chain.network, test: true });
  t.ok(local.test?.faucet, 'whose faucet funds test agents');
  t.equal((await railsOf(live, chainFile)).test, undefined, 'a chain file at the default place is no test rail beside a live one');
  t.match((await railsOf({}, chainFile)).live, { name: 'local_husd', test: true }, 'alone, it is the one rail, as in development');

  /** A setting hub cannot honour stops it with one line (a ConfigError). */
  const refused = async (env: Record<string, string>, message: RegExp) => {
    const err = await resolvePaymentRails({ ...config, chainFile }, env).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    t.type(err, ConfigError);
    t.match((err as Error | undefined)?.message, message);
  };
  await refused(testRemote, /HUB_TEST_FACILITATOR_URL is the test rail beside a live one: set HUB_FACILITATOR_URL too/);
  await refused({ ...live, ...testRemote, HUB_CHAIN_FILE: chainFile }, /both HUB_TEST_FACILITATOR_URL and the local chain/);
  await refused({ ...live, ...testRemote, HUB_PAYMENT_TEST_RAIL: '1' }, /is a test rail \(HUB_PAYMENT_TEST_RAIL=1\)/);
  await refused({ ...remote, ...testRemote }, new RegExp(`both on ${chain.network}`));
  await t.rejects(
    resolvePaymentRails(config, { ...live, ...testRemote, HUB_TEST_PAYMENT_RPC_URL: 'localhost:8545' }),
    /HUB_TEST_PAYMENT_RPC_URL must be an http\(s\) URL/,
  );
  await t.rejects(
    resolvePaymentRails(config, { ...live, HUB_TEST_FACILITATOR_URL: facilitatorUrl }),
    /HUB_TEST_PAYMENT_NETWORK is required/,
  );
});
