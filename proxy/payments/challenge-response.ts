import type { IncomingMessage } from 'node:http';
import type { ControlPlaneClient } from '../control-plane-client.js';
import { mppChallenge } from './mpp.js';
import { isUsageQuantity } from '../../shared/usage-quantity.js';
import { encodeHeaderJson, X402_VERSION } from './x402-headers.js';

/** A priced challenge as the control-plane issued it. */
export type IssuedChallenge = Extract<
  Awaited<ReturnType<ControlPlaneClient['internal']['createChallenge']['mutate']>>,
  { ok: true }
>['challenge'];

/** Fields of a seller's 402 the proxy acts on (spec: Bodies the seller's API returns). */
export type SellerPaymentRequired = { serviceSlug: string; usage: { meterSlug: string; quantity?: number }[]; planSlug?: string };

/** Parses a seller's 402 body; undefined when it is not the spec's `payment_required` shape. */
export function parseSellerPaymentRequired(body: Buffer): SellerPaymentRequired | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const v = value as Record<string, unknown>;
  if (v?.error !== 'payment_required' || typeof v.serviceSlug !== 'string' || !v.serviceSlug || !Array.isArray(v.usage)) return undefined;
  const usage: SellerPaymentRequired['usage'] = [];
  for (const item of v.usage as unknown[]) {
    const i = item as Record<string, unknown>;
    if (!i || typeof i.meterSlug !== 'string' || !i.meterSlug) return undefined;
    if (i.quantity !== undefined && !isUsageQuantity(i.quantity)) return undefined;
    usage.push({ meterSlug: i.meterSlug, ...(i.quantity !== undefined ? { quantity: i.quantity as number } : {}) });
  }
  return { serviceSlug: v.serviceSlug, usage, ...(typeof v.planSlug === 'string' ? { planSlug: v.planSlug } : {}) };
}

/**
 * The agent-facing 402 (spec: Priced challenge body shape): the priced body, with the x402
 * document's fields at its top level, and the same challenge in `payment-required` (x402) and
 * `www-authenticate` (MPP). `rail` and `network` are left out of `payment` on anonymous challenges.
 */
export function challengeResponse(
  req: IncomingMessage,
  challenge: IssuedChallenge,
  ids: { requestId: string; agentId?: string | undefined },
  body: Buffer,
  mppSecret: string,
) {
  const mpp = mppChallenge(req, challenge, body, mppSecret);
  const resource = { url: `http://${req.headers.host ?? ''}${req.url ?? '/'}`, mimeType: 'application/json' };
  const x402Document = { x402Version: X402_VERSION, error: 'payment_required', resource, accepts: [challenge.requirements] };
  const payload = {
    error: 'payment_required',
    reason: 'absent',
    ...(ids.agentId ? { zcAgentId: ids.agentId } : {}),
    zcRequestId: ids.requestId,
    serviceSlug: challenge.serviceSlug,
    usage: challenge.usage,
    plan: challenge.plan,
    payment: {
      id: challenge.paymentId,
      amountUsd: challenge.amountUsd,
      ...(ids.agentId ? { rail: challenge.rail, network: challenge.network } : {}),
    },
    protocols: {
      x402: {
        x402Version: X402_VERSION,
        network: challenge.requirements.network,
        scheme: challenge.requirements.scheme,
        amount: challenge.requirements.amount,
        asset: challenge.requirements.asset,
      },
      mpp: { challengeId: mpp.challengeId, method: 'evm', intent: 'charge' },
    },
    x402Version: X402_VERSION,
    resource,
    accepts: [challenge.requirements],
  };
  return {
    body: payload,
    headers: { 'payment-required': encodeHeaderJson(x402Document), 'www-authenticate': mpp.header, 'cache-control': 'no-store' },
  };
}
