import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t from 'tap';
import { type Address, type Hex, parseAbi, zeroAddress } from 'viem';
import { privateKeyToAccount, toAccount } from 'viem/accounts';
import { compileContract } from '../../../chain/compile.js';
import type { PaymentRail } from '../../../control-plane/payments/rail.js';
import { claimVouchers } from '../../../control-plane/sessions/claim-vouchers.js';
import type { SessionRail } from '../../../control-plane/sessions/session-rail.js';
import { chainReader, chainWallet, tokenBalance } from '../../helpers/chain.js';
import { testProviders } from '../../helpers/database.js';
import { startPaidWorld } from '../../helpers/paid-world.js';

// A smart-contract wallet paying hub, through x402's unmodified clients with the wallet as their
// address and its owner's key signing. With `exact` (docs/decisions.md#D-363), the authorization's
// signature is the wallet's when the wallet says so (ERC-1271), as the token judges it. With
// batch-settlement (D-362), its channel has no payer authorizer (zero), so a voucher is the wallet's
// on the same terms, as the channel contract's claim judges it: the wallet deposits by ERC-3009 with
// its own signature, hub asks the wallet about each voucher, and claims and the payer's refund go through.

t.setTimeout(180_000);

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));
const erc20 = parseAbi(['function transfer(address to, uint256 value) returns (bool)']);
const testContracts = fileURLToPath(new URL('../../contracts', import.meta.url));

for (const provider of testProviders()) {
  t.test(`a smart-contract wallet pays on ${provider}`, async (t) => {
    const world = await startPaidWorld(t, provider);
    const { api, chain, db, hub, payTo, sellerId, served, url } = world;
    const rail = world.rail as PaymentRail & { sessions: SessionRail };
    const reader = chainReader(chain);
    t.equal((await api.patch(`/v1/sellers/${sellerId}`, hub.apiKey, { x402Schemes: ['exact', 'batch-settlement'] })).status, 200);

    // The wallet, owned by an EOA of the chain, holding 0.1 of the token.
    const ownerKey = chain.accounts[4]!.privateKey as Hex;
    const owner = privateKeyToAccount(ownerKey);
    const ownerWallet = chainWallet(chain, ownerKey);
    const { abi, bytecode } = await compileContract('OwnedWallet', {
      sourcesDir: testContracts,
      cacheDir: join(tmpdir(), 'hub-contracts'),
    });
    const deployed = await reader.waitForTransactionReceipt({
      hash: await ownerWallet.deployContract({ abi, bytecode, args: [owner.address] } as never),
    });
    const wallet = deployed.contractAddress as Address;
    await reader.waitForTransactionReceipt({
      hash: await ownerWallet.writeContract({
        address: chain.token.address,
        abi: erc20,
        functionName: 'transfer',
        args: [wallet, 100_000n],
      } as never),
    });

    /** x402's client paying as the wallet: the wallet's address, its owner's key signing, no payer authorizer. */
    const walletSigner = (signingKey: Hex) => {
      const signing = privateKeyToAccount(signingKey);
      return toAccount({
        address: wallet,
        signMessage: (message) => signing.signMessage(message),
        signTransaction: (transaction) => signing.signTransaction(transaction),
        signTypedData: (typedData) => signing.signTypedData(typedData as never),
      });
    };
    const walletClient = (signingKey: Hex, salt: Hex) => {
      const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(walletSigner(signingKey), reader), {
        salt,
        payerAuthorizer: zeroAddress,
      });
      const client = new x402Client();
      client.register(chain.network, scheme);
      client.setSpendControls({ allowedAssets: true });
      return { scheme, pay: wrapFetchWithPayment(fetch, client) };
    };
    /** x402's exact client paying as the wallet, signed with `signingKey`. */
    const exactClient = (signingKey: Hex) => {
      const client = new x402Client();
      registerExactEvmScheme(client, { signer: walletSigner(signingKey) });
      client.setSpendControls({ allowedAssets: true });
      return wrapFetchWithPayment(fetch, client);
    };
    const balances = async () => ({ wallet: await tokenBalance(chain, wallet), payee: await tokenBalance(chain, payTo as Address) });

    await t.test('exact: the wallet’s authorization taken by ERC-1271, settled from the wallet', async (t) => {
      const before = await balances();
      const res = await exactClient(ownerKey)(url('/search?q=wallet-exact'));
      t.equal(res.status, 200, await res.clone().text());
      t.match(fromB64(res.headers.get('payment-response')), { success: true, payer: wallet, transaction: /^0x[0-9a-f]{64}$/ });
      t.same(await balances(), { wallet: before.wallet - 10_000n, payee: before.payee + 10_000n }, 'one cent from the wallet');
      t.match(await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?q=wallet-exact' } }), {
        status: 'settled',
        payer: wallet.toLowerCase(),
      });
    });

    await t.test('exact: an authorization the wallet does not take, or one through the escrow, is refused', async (t) => {
      const before = await balances();
      const servedBefore = served.length;
      const stranger = await exactClient(chain.accounts[5]!.privateKey as Hex)(url('/search?q=wallet-exact-stranger'));
      t.equal(stranger.status, 402, 'a key that is not the owner’s');
      t.match(await stranger.json(), { error: 'payment_required', reason: 'settlement_failed', settlementReason: 'invalid_signature' });
      // A ceiling-priced call pays the escrow, which takes EOA signatures alone.
      const ceiling = await exactClient(ownerKey)(url('/search?max=2&used=1&q=wallet-exact-ceiling'));
      t.equal(ceiling.status, 402, 'a ceiling-priced call');
      t.match(await ceiling.json(), { error: 'payment_required', reason: 'settlement_failed', settlementReason: 'invalid_signature' });
      t.match(
        await db.paymentAttempt.findFirstOrThrow({ where: { pathAndQuery: '/search?max=2&used=1&q=wallet-exact-ceiling' } }),
        {
          status: 'challenge_created',
          payer: null,
        },
        'the attempt is left open, nothing claimed',
      );
      t.equal(served.length, servedBefore, 'nothing forwarded');
      t.same(await balances(), before, 'nothing moved');
    });

    const salt = `0x${randomBytes(32).toString('hex')}` as Hex;
    const { scheme, pay } = walletClient(ownerKey, salt);
    const settlerNonce = () => reader.getTransactionCount({ address: chain.settler.address as Address });

    let channelId = '' as Hex;
    // What the wallet holds once the exact payment above is paid: the sessions' moves are counted from it.
    let held = 0n;
    await t.test('the wallet deposits and pays vouchers, each taken as the wallet’s by ERC-1271', async (t) => {
      held = await tokenBalance(chain, wallet);
      for (const [n, charged] of [
        [1, 10_000],
        [2, 20_000],
        [3, 30_000],
      ] as const) {
        const res = await pay(url(`/search?q=wallet-${n}`));
        t.equal(res.status, 200, await res.clone().text());
        const receipt = fromB64(res.headers.get('payment-response'));
        t.match(receipt.extra, { chargedAmount: '10000', channelState: { chargedCumulativeAmount: String(charged) } });
        if (n === 1) t.match(receipt.transaction, /^0x[0-9a-f]{64}$/, 'the first call deposits');
        else t.equal(receipt.transaction, '', 'later ones are vouchers alone');
        channelId = receipt.extra.channelState.channelId;
      }
      t.equal(await tokenBalance(chain, wallet), held - 50_000n, 'the deposit left the wallet');
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } }), {
        payer: wallet.toLowerCase(),
        payerAuthorizer: zeroAddress,
        balance: 50_000n,
        charged: 30_000n,
      });
    });

    await t.test('a voucher the wallet does not take: refused, nothing forwarded, nothing sent', async (t) => {
      // The same channel (the same salt), a client that never saw it: it deposits, its voucher
      // signed by a key that is not the wallet's owner.
      const stranger = walletClient(chain.accounts[5]!.privateKey as Hex, salt);
      const servedBefore = served.length;
      const nonce = await settlerNonce();
      const res = await stranger.pay(url('/search?q=wallet-stranger'));
      t.equal(res.status, 402);
      t.equal(fromB64(res.headers.get('payment-required')).error, 'invalid_batch_settlement_evm_voucher_signature');
      t.equal(served.length, servedBefore, 'nothing forwarded');
      t.equal(await settlerNonce(), nonce, 'no deposit sent');
      t.equal(await tokenBalance(chain, wallet), held - 50_000n);
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } }), { charged: 30_000n, heldBy: null });
    });

    await t.test('the charges claimed on chain with the wallet’s voucher; the rest refunded to the wallet', async (t) => {
      t.equal((await claimVouchers(db, rail)).channels, 1);
      t.same(await rail.sessions.channel(channelId), { balance: 50_000n, totalClaimed: 30_000n }, 'the contract took the voucher');
      const refunded = await scheme.refund(url('/search?q=wallet-refund'));
      t.match(refunded, { success: true, amount: '20000' });
      t.equal(await tokenBalance(chain, wallet), held - 30_000n, 'the wallet has back what was not charged');
      t.same(await rail.sessions.channel(channelId), { balance: 30_000n, totalClaimed: 30_000n });
    });

    await t.test('a wallet that stops taking its voucher holds up no other channel’s claim (D-364)', async (t) => {
      // An EOA's channel and a new channel of the wallet's, each with charges to claim.
      const eoa = new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(world.payerKey), reader), {
        salt: `0x${randomBytes(32).toString('hex')}` as Hex,
      });
      const eoaClient = new x402Client();
      eoaClient.register(chain.network, eoa);
      eoaClient.setSpendControls({ allowedAssets: true });
      const eoaPaid = await wrapFetchWithPayment(fetch, eoaClient)(url('/search?q=wallet-batch-eoa'));
      t.equal(eoaPaid.status, 200, await eoaPaid.clone().text());
      const eoaChannel = fromB64(eoaPaid.headers.get('payment-response')).extra.channelState.channelId as Hex;
      const secondSalt = `0x${randomBytes(32).toString('hex')}` as Hex;
      const second = walletClient(ownerKey, secondSalt);
      let walletChannel = '' as Hex;
      for (const n of [1, 2]) {
        const res = await second.pay(url(`/search?q=wallet-batch-${n}`));
        t.equal(res.status, 200, await res.clone().text());
        walletChannel = fromB64(res.headers.get('payment-response')).extra.channelState.channelId;
      }

      // The owner hands the wallet to another key: the voucher hub holds is no longer the wallet's.
      await reader.waitForTransactionReceipt({
        hash: await ownerWallet.writeContract({
          address: wallet,
          abi,
          functionName: 'rotate',
          args: [chain.accounts[5]!.address],
        } as never),
      });
      const nonce = await settlerNonce();
      t.match(
        await claimVouchers(db, rail),
        { channels: 1, transaction: /^0x/, refused: 1 },
        'the EOA’s channel claimed, the wallet’s refused',
      );
      t.same(await rail.sessions.channel(eoaChannel), { balance: 50_000n, totalClaimed: 10_000n }, 'claimed on chain');
      t.same(await rail.sessions.channel(walletChannel), { balance: 50_000n, totalClaimed: 0n }, 'the wallet’s is not');
      t.equal(await settlerNonce(), nonce + 1, 'one transaction: the refused claim was never sent');
      t.match(await db.sessionTransaction.findFirstOrThrow({ where: { kind: 'claim' }, orderBy: { createdAt: 'desc' } }), {
        status: 'failed',
        openKey: null,
      });
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: walletChannel } }), { claimRefusedAt: Date, heldBy: null });
      t.match(
        await db.sessionChannel.findUniqueOrThrow({ where: { id: eoaChannel } }),
        { claimRefusedAt: null },
        'the EOA’s is not marked',
      );

      // The old key's next voucher is no longer the wallet's; the new key's, which the wallet takes, is
      // not taken either: the channel takes no charge until a claim of it goes through.
      const servedBefore = served.length;
      const oldKey = await second.pay(url('/search?q=wallet-batch-3'));
      t.equal(oldKey.status, 402);
      t.equal(fromB64(oldKey.headers.get('payment-required')).error, 'invalid_batch_settlement_evm_voucher_signature');
      const newKey = await walletClient(chain.accounts[5]!.privateKey as Hex, secondSalt).pay(url('/search?q=wallet-batch-4'));
      t.equal(newKey.status, 402);
      t.equal(fromB64(newKey.headers.get('payment-required')).error, 'invalid_batch_settlement_evm_channel_busy');
      t.equal(served.length, servedBefore, 'nothing forwarded');
      t.equal(await settlerNonce(), nonce + 1, 'nothing sent');
      t.same(await claimVouchers(db, rail), { channels: 0, refused: 1 }, 'the next round tries it again, alone');

      // Handed back to the first key, the wallet takes the voucher again: the claim goes through, and the channel is charged again.
      await reader.waitForTransactionReceipt({
        hash: await chainWallet(chain, chain.accounts[5]!.privateKey as Hex).writeContract({
          address: wallet,
          abi,
          functionName: 'rotate',
          args: [owner.address],
        } as never),
      });
      t.match(await claimVouchers(db, rail), { channels: 1 });
      t.same(await rail.sessions.channel(walletChannel), { balance: 50_000n, totalClaimed: 20_000n }, 'claimed on chain');
      t.match(await db.sessionChannel.findUniqueOrThrow({ where: { id: walletChannel } }), { claimRefusedAt: null, totalClaimed: 20_000n });
      const again = await second.pay(url('/search?q=wallet-batch-5'));
      t.equal(again.status, 200, await again.clone().text());
      t.match(fromB64(again.headers.get('payment-response')).extra.channelState, { chargedCumulativeAmount: '30000' });
    });
  });
}
