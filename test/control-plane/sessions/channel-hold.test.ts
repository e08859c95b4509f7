import t from 'tap';
import type { Hex } from 'viem';
import type { Db } from '../../../control-plane/db/client.js';
import { sqlOf } from '../../../control-plane/db/sql.js';
import { claimAttempt } from '../../../control-plane/payments/attempt-claim.js';
import { readAttempt } from '../../../control-plane/payments/attempt-rows.js';
import { holdChannel, mirrorChannel, releaseUnlessClaimed } from '../../../control-plane/sessions/channel-mirror.js';
import { newId } from '../../../shared/ids.js';
import { createTestDatabase, testProviders } from '../../helpers/database.js';

// A channel's hold after a paid retry failed (docs/decisions.md#D-354): the same payment sent twice
// at once shares its attempt's hold, and the copy that lost the claim lets the channel go only if no
// copy claimed the attempt. The rows are written straight into the database: this is the hold's own
// test, and the paths that reach them (a deposit, a voucher, a busy channel) are walked through the
// pay URL by test/proxy/payments/sessions.test.ts.

const ADDRESS = '0x1111111111111111111111111111111111111111';
const CONFIG = {
  payer: ADDRESS,
  payerAuthorizer: ADDRESS,
  receiver: ADDRESS,
  receiverAuthorizer: ADDRESS,
  token: ADDRESS,
  withdrawDelay: 86_400,
  salt: `0x${'00'.repeat(32)}`,
} as const;

async function sellerAttempt(db: Db, provider: string): Promise<string> {
  const organizationId = newId('organization');
  await db.organization.create({ data: { id: organizationId, name: 'Acme' } });
  const sellerId = newId('seller');
  await db.seller.create({
    data: { id: sellerId, organizationId, name: 'Acme', slug: `acme-${provider}`, upstreamBaseUrl: 'http://127.0.0.1:9' },
  });
  const id = newId('paymentAttempt');
  await db.paymentAttempt.create({
    data: {
      id,
      organizationId,
      sellerId,
      requestId: newId('request'),
      kind: 'call',
      method: 'GET',
      pathAndQuery: '/',
      bodyDigest: 'digest',
      amountMicros: 10_000n,
      status: 'challenge_created',
    },
  });
  return id;
}

for (const provider of testProviders()) {
  t.test(`${provider}: a failed copy of a payment never frees the channel its claimed twin holds`, async (t) => {
    const { db } = await createTestDatabase(t, provider);
    const sql = sqlOf(db);
    const channelId = `0x${'ab'.repeat(32)}` as Hex;
    await mirrorChannel(sql, channelId, 'eip155:31337', CONFIG, { balance: 100_000n, totalClaimed: 0n });
    const attemptId = await sellerAttempt(db, provider);
    const heldBy = async () => (await db.sessionChannel.findUniqueOrThrow({ where: { id: channelId } })).heldBy;

    // Two copies hold the channel under the one attempt; one fails before anything is claimed.
    t.ok(await holdChannel(sql, channelId, attemptId, 60_000), 'the first copy holds the channel');
    t.ok(await holdChannel(sql, channelId, attemptId, 60_000), 'its twin shares the hold');
    await releaseUnlessClaimed(sql, channelId, attemptId);
    t.equal(await heldBy(), null, 'nothing claimed: the channel is let go');

    // Again, and this time one copy claims the attempt (its call goes to the seller); the other fails.
    t.ok(await holdChannel(sql, channelId, attemptId, 60_000));
    t.ok(await holdChannel(sql, channelId, attemptId, 60_000));
    const attempt = (await readAttempt(sql, attemptId))!;
    await sql.transaction((tx) =>
      claimAttempt(tx, attempt, ADDRESS, { protocol: 'x402', paymentMethod: 'x402_session', paymentPayloadJson: '{}', channelId }),
    );
    await releaseUnlessClaimed(sql, channelId, attemptId);
    t.equal(await heldBy(), attemptId, 'the claimed call keeps its channel');
    t.notOk(await holdChannel(sql, channelId, newId('paymentAttempt'), 60_000), 'another request finds it busy');
  });
}
