import type { UpstreamAddresses } from '../../runtime/upstream-addresses.js';
import type { MintedKey } from '../../shared/contract.js';
import { ApiError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { accessEndpointUrlOf } from '../catalog/access-endpoint.js';
import type { Db } from '../db/client.js';
import { heldBy, verifiedEmail } from '../storefront/holders.js';
import { callAccountEndpoint, SecretCache } from './account-call.js';
import { DELIVERY_SCHEDULE, type DeliverySchedule, hintMs } from './schedule.js';

/**
 * `POST /keys/redeem` (spec: Pay URL endpoints, Key mint body and result, Mint replies): asks the
 * stateful seller to mint a key for one of the accounts the agent or its human holds, within the
 * response budget, and relays the answer. The key passes through and is never stored or logged.
 *
 * Refused before the seller is asked: servicing off, or a seller that takes no account writes
 * (501 `entitlements_not_available`); no account, or one the caller does not hold (404
 * `access_not_found`); several accounts and none named (400 `invalid_request`); an account the
 * seller has not acknowledged as active yet (409 `account_not_provisioned`, retry after 30 s).
 */
export async function redeemKey(
  db: Db,
  masterKey: Buffer,
  input: { sellerId: string; agentId: string; accessId?: string | undefined },
  addresses?: UpstreamAddresses,
  schedule: DeliverySchedule = DELIVERY_SCHEDULE,
): Promise<MintedKey> {
  const seller = await db.seller.findUniqueOrThrow({ where: { id: input.sellerId } });
  if (!seller.servicingEnabled) throw new ApiError('entitlements_not_available', 'Key servicing is off for this seller.');
  if (!seller.stateful) throw new ApiError('entitlements_not_available', 'This seller issues no keys: its calls are authorized by hub.');
  const agent = await db.agent.findUniqueOrThrow({
    where: { id: input.agentId },
    select: { buyerId: true, buyer: { select: { email: true, emailVerifiedAt: true } } },
  });
  const held = await db.access.findMany({
    where: { sellerId: seller.id, ...heldBy(input.agentId, agent.buyerId) },
    select: { id: true, provisioningState: true },
  });
  const account = input.accessId === undefined ? onlyOne(held) : held.find((a) => a.id === input.accessId);
  if (!account) throw new ApiError('access_not_found', 'You hold no such account here: see /purchases/receipt.');
  if (account.provisioningState !== 'active') {
    throw new ApiError('account_not_provisioned', 'The seller has not set this account up yet.', { retryAfterSeconds: 30 });
  }

  const variant = seller.accountWriteVariant;
  const buyer = { id: agent.buyerId, email: verifiedEmail(agent.buyer) };
  const result = await callAccountEndpoint(
    new SecretCache(db, masterKey),
    {
      sellerId: seller.id,
      url: `${accessEndpointUrlOf(seller)}/${encodeURIComponent(account.id)}/keys`,
      purpose: 'access.mint',
      body: variant === 'later' ? { agentId: input.agentId, buyerId: buyer.id, buyerEmail: buyer.email } : { agent: input.agentId },
      requestId: newId('request'),
      agentId: input.agentId,
      ...(variant === 'later' ? { buyer } : {}),
    },
    schedule.budgetMs,
    addresses,
  );
  if (result.kind === 'no_secret') throw new ApiError('signing_secret_required');
  if (result.kind === 'unreachable') throw new ApiError('key_mint_failed', `The seller did not answer: ${result.reason}.`);
  let reply: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(result.text);
    if (typeof parsed === 'object' && parsed !== null) reply = parsed as Record<string, unknown>;
  } catch {
    // An unreadable reply is judged by its status alone.
  }
  if (result.status === 200 && typeof reply.apiKey === 'string' && reply.apiKey) {
    return {
      accessId: account.id,
      apiKey: reply.apiKey,
      ...(Number.isSafeInteger(reply.maxKeys) ? { maxKeys: reply.maxKeys as number } : {}),
      ...(typeof reply.keyExpiresAt === 'string' ? { keyExpiresAt: reply.keyExpiresAt } : {}),
    };
  }
  if (result.status === 409 && reply.notProvisioned === true) {
    const afterMs = hintMs(schedule, reply.retryAfterSeconds) ?? 30_000;
    throw new ApiError('account_not_provisioned', 'The seller is still setting this account up.', {
      retryAfterSeconds: Math.ceil(afterMs / 1000),
    });
  }
  const conflict = (reply.conflict as { code?: unknown } | undefined)?.code;
  if (result.status === 409 && typeof conflict === 'string') {
    throw new ApiError('key_mint_refused', 'The seller refused to mint a key.', { sellerCode: conflict.slice(0, 100) });
  }
  if (result.status === 404) throw new ApiError('key_mint_failed', 'The seller does not know this account.');
  throw new ApiError('key_mint_failed', `The seller answered ${result.status}.`);
}

function onlyOne<T>(held: T[]): T | undefined {
  if (held.length > 1) throw new ApiError('invalid_request', `You hold ${held.length} accounts here: name one with accessId.`);
  return held[0];
}
