import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '@x402/evm';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import fc from 'fast-check';
import t from 'tap';
import { bytesToHex, getAddress, type Hex, hashTypedData } from 'viem';
import { batchSettlementDomain, type ChannelConfig, channelIdOf, voucherDigest } from '../../../control-plane/sessions/channel-digests.js';
import { BATCH_SETTLEMENT_CONTRACT, ERC3009_DEPOSIT_COLLECTOR } from '../../../shared/payments/batch-settlement.js';

const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => getAddress(bytesToHex(bytes)));
const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => bytesToHex(bytes));
const config = fc.record({
  payer: address,
  payerAuthorizer: address,
  receiver: address,
  receiverAuthorizer: address,
  token: address,
  withdrawDelay: fc.integer({ min: 0, max: 2 ** 40 - 1 }),
  salt: bytes32,
});
const chainId = fc.integer({ min: 1, max: 2 ** 31 });

t.test('the scheme’s addresses are x402’s', async (t) => {
  t.equal(BATCH_SETTLEMENT_CONTRACT, getAddress(BATCH_SETTLEMENT_ADDRESS));
  t.equal(ERC3009_DEPOSIT_COLLECTOR, getAddress(ERC3009_DEPOSIT_COLLECTOR_ADDRESS));
});

t.test('a channel id is the one x402’s client and viem compute', async (t) => {
  fc.assert(
    fc.property(config, chainId, (c: ChannelConfig, id) => {
      const ours = channelIdOf(c, id);
      t.equal(ours, computeChannelId(c, id).toLowerCase());
      t.equal(
        ours,
        hashTypedData({
          domain: batchSettlementDomain(id),
          types: {
            ChannelConfig: [
              { name: 'payer', type: 'address' },
              { name: 'payerAuthorizer', type: 'address' },
              { name: 'receiver', type: 'address' },
              { name: 'receiverAuthorizer', type: 'address' },
              { name: 'token', type: 'address' },
              { name: 'withdrawDelay', type: 'uint40' },
              { name: 'salt', type: 'bytes32' },
            ],
          },
          primaryType: 'ChannelConfig',
          message: c,
        }).toLowerCase(),
      );
    }),
    { numRuns: 200 },
  );
});

t.test('a voucher’s digest is viem’s', async (t) => {
  fc.assert(
    fc.property(bytes32, fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }), chainId, (channelId, max, id) => {
      const expected = hashTypedData({
        domain: batchSettlementDomain(id),
        types: {
          Voucher: [
            { name: 'channelId', type: 'bytes32' },
            { name: 'maxClaimableAmount', type: 'uint128' },
          ],
        },
        primaryType: 'Voucher',
        message: { channelId: channelId as Hex, maxClaimableAmount: max },
      });
      t.equal(bytesToHex(voucherDigest(channelId as Hex, max, id)), expected);
    }),
    { numRuns: 200 },
  );
});
