import type { ServerResponse } from 'node:http';
import {
  type HubIdentity,
  isUsageQuantity,
  PAYMENT_REQUIRED_STATUS,
  paymentRequiredBody,
  sendJson,
  setUsageHeader,
  type UsageClient,
} from '../../sdk/index.js';

export type Meter = { meterSlug: string; quantity: number };
export type MeteredContext = { usage: UsageClient; serviceSlug: string; meters: readonly Meter[]; planSlug?: string };

/**
 * The paid endpoint. Asks hub whether this request may use `meters`; when not (an unpaid probe
 * gets `access_not_found`), answers the 402 body so hub can price the usage and challenge the
 * agent. When allowed, serves and settles: by the `hub-usage` header (default), or by a usage
 * report when `settle` is `report`. `?actual=N` settles N of the first meter instead of its
 * configured quantity (for tests of reports below or beyond the authorization). `?max=N` asks for
 * the first meter at a ceiling instead: the agent authorizes up to N and pays what was used.
 * A request body (`POST /metered`) comes back as `received`, so an agent can see what arrived.
 * A call served while hub's usage API was down (the `failOpen` policy) says `allowanceOutage: true`.
 */
export async function metered(
  res: ServerResponse,
  query: URLSearchParams,
  identity: HubIdentity,
  ctx: MeteredContext,
  settle: 'header' | 'report',
  body?: Buffer,
): Promise<void> {
  const max = query.get('max');
  const ceiling = max !== null && isUsageQuantity(Number(max)) ? Number(max) : undefined;
  // What the call asks for: each meter's quantity, or the first one at most `ceiling`.
  const asked = ctx.meters.map(({ meterSlug, quantity }, i) =>
    i === 0 && ceiling !== undefined ? { meterSlug, maxQuantity: ceiling } : { meterSlug, quantity },
  );
  // When hub cannot be asked, the usage client's outage policy decides: failClosed throws, and
  // withHubSignature answers 503 allowance_unavailable; failOpen allows the call, flagged `outage`.
  const check = await ctx.usage.check({ zcRequestId: identity.requestId, serviceSlug: ctx.serviceSlug, usage: asked });
  if (!check.allowed) {
    res.setHeader('x-usage-denied', String(check.reason));
    sendJson(res, PAYMENT_REQUIRED_STATUS, paymentRequiredBody({ serviceSlug: ctx.serviceSlug, usage: asked, planSlug: ctx.planSlug }));
    return;
  }

  const actual = query.get('actual');
  const used = ctx.meters.map((m, i) => ({
    serviceSlug: ctx.serviceSlug,
    meterSlug: m.meterSlug,
    quantity: i === 0 && actual !== null && isUsageQuantity(Number(actual)) ? Number(actual) : m.quantity,
  }));
  const result = {
    served: true,
    requestId: identity.requestId,
    agentId: identity.agentId ?? null,
    usage: used,
    ...(check.outage ? { allowanceOutage: true } : {}),
    ...(body?.length ? { received: body.toString('utf8') } : {}),
  };
  if (settle === 'header') {
    setUsageHeader(res, used);
    sendJson(res, 200, result);
    return;
  }
  // Under failOpen a report hub cannot take now comes back `queued` and is sent again later.
  const report = await ctx.usage.report({
    idempotencyKey: identity.requestId,
    zcRequestId: identity.requestId,
    serviceSlug: ctx.serviceSlug,
    usage: used.map(({ meterSlug, quantity }) => ({ meterSlug, quantity })),
  });
  sendJson(res, 200, { ...result, report });
}
