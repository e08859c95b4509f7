import type { Hex } from 'viem';
import { Prisma } from '../../generated/prisma/sqlite/client.js';
import { ApiError } from '../../shared/errors.js';
import type { SessionPayload } from '../../shared/payments/x402-wire.js';
import type { sqlOf } from '../db/sql.js';
import type { CallOutcome } from '../facilitator/local-facilitator.js';
import type { ChannelConfig } from './channel-digests.js';
import { depositNonce, type SessionRail } from './session-rail.js';
import { unreadable } from './session-refusal.js';
import { recordOutcome, sendRecorded } from './session-transactions.js';

/**
 * A payer's deposit, submitted by hub's settler (docs/decisions.md#D-286) and recorded before it is
 * sent (docs/decisions.md#D-337): a `SessionTransaction` of kind `deposit` whose id is the deposit's
 * own (its authorization's nonce, bound to the channel), so the same deposit sent again finds it.
 * Before anything is sent the chain is asked whether the authorization is used already: then the
 * deposit is in the channel (an earlier send of it landed, its outcome lost), and the payment is
 * answered from the chain, with that send's transaction, nothing sent again. A deposit refused or
 * reverted is looked at once more the same way (an earlier send may have landed meanwhile).
 */

type Sql = ReturnType<typeof sqlOf>;

/** The deposit's record id: one per authorization. */
function recordId(nonce: Hex): string {
  return `stx_deposit_${nonce.slice(2)}`;
}

/** Submits the deposit (or finds it landed) and reads the channel's new balance; a deposit the chain refuses is the payer's 402. */
export async function submitDeposit(
  sql: Sql,
  sessions: SessionRail,
  network: string,
  payload: Extract<SessionPayload, { type: 'deposit' }>,
  config: ChannelConfig,
  channelId: Hex,
  refuse: (code: string) => ApiError,
): Promise<{ transaction: string; balance: bigint }> {
  const authorization = payload.deposit.authorization.erc3009Authorization;
  const salt = authorization.salt as Hex;
  const nonce = depositNonce(channelId, salt);
  const id = recordId(nonce);
  const amount = BigInt(payload.deposit.amount);
  const landed = () => sessions.depositLanded(config, salt).catch(unreadable);
  const answered = async (transaction: string | null | undefined) => {
    const { balance } = await sessions.channel(channelId).catch(unreadable);
    return { transaction: transaction ?? '', balance };
  };

  if (await landed()) return answered(await closeLanded(sql, id));
  await openDeposit(sql, id, network, nonce, { channelId, payer: config.payer.toLowerCase(), nonce, amount: amount.toString() }, amount);
  const sent: CallOutcome = await sendRecorded(
    sql,
    id,
    () =>
      sessions.deposit(
        config,
        amount,
        { validAfter: authorization.validAfter, validBefore: authorization.validBefore, salt, signature: authorization.signature as Hex },
        { maxClaimableAmount: BigInt(payload.voucher.maxClaimableAmount), signature: payload.voucher.signature as Hex },
      ),
    async () => {},
  ).catch(unreadable);
  if (sent.status === 'refused' || sent.status === 'reverted') {
    // Refused as used: an earlier send of this deposit landed after all.
    if (await landed()) return answered(await closeLanded(sql, id));
    throw refuse('invalid_batch_settlement_evm_deposit_transaction_failed');
  }
  if (sent.status === 'unknown') {
    throw new ApiError(
      'service_unavailable',
      'The deposit was sent but the chain has not confirmed it yet. Send the same payment again shortly.',
    );
  }
  return answered(sent.transaction);
}

/**
 * Writes the deposit's record `sending` before it is sent: a new one, or the record of an earlier
 * send of it that did not land (its hash kept until this send's is known).
 */
async function openDeposit(sql: Sql, id: string, network: string, nonce: Hex, items: unknown, amount: bigint): Promise<void> {
  const now = new Date();
  await sql.run(Prisma.sql`INSERT INTO "SessionTransaction" ("id", "network", "kind", "status", "openKey", "itemsJson", "amount",
      "createdAt", "updatedAt")
    VALUES (${id}, ${network}, 'deposit', 'sending', ${`deposit:${nonce}`}, ${JSON.stringify(items)}, ${amount}, ${now}, ${now})
    ON CONFLICT ("id") DO UPDATE SET "status" = 'sending', "openKey" = ${`deposit:${nonce}`}, "error" = NULL, "updatedAt" = ${now}`);
}

/** The deposit landed: its record (if hub sent it) closed as mined, and the transaction it was sent in, when known. */
async function closeLanded(sql: Sql, id: string): Promise<string | null> {
  const row = await sql.get<{ transaction: string | null }>(Prisma.sql`SELECT "transaction" FROM "SessionTransaction" WHERE "id" = ${id}`);
  if (!row) return null;
  await recordOutcome(sql, id, { status: 'mined', transaction: row.transaction }, async () => {});
  return row.transaction;
}
