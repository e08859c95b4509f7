import type { IncomingMessage, ServerResponse } from 'node:http';
import type Stripe from 'stripe';
import { readBody } from '../../runtime/read-body.js';
import { sendJson } from '../../runtime/respond.js';
import { ApiError } from '../../shared/errors.js';
import type { ControlPlaneServices } from '../context.js';
import { violatedConstraint } from '../db/constraints.js';
import { finishCardPurchase } from './card-purchase.js';
import { cardProvider } from './provider.js';
import { applyProviderEvent } from './provider-events.js';

/** Where the provider posts its events: on the control-plane, outside the REST API (no credential, raw body). */
export const PROVIDER_WEBHOOK_PATH = '/webhooks/stripe';

/** Provider events are small; anything larger is not one. */
const MAX_EVENT_BYTES = 512 * 1024;

/**
 * The provider's events (docs/decisions.md#D-243). The body is verified byte for byte against the
 * `Stripe-Signature` header with the provider's own SDK (any configured endpoint secret, within
 * its five-minute tolerance); anything else is 400 `invalid_webhook_signature` and changes
 * nothing. An event is applied once: its id is recorded in the same transaction that applies it,
 * so a redelivery (the provider retries until it gets a 2xx) answers 200 and changes nothing.
 */
export async function handleProviderWebhook(services: ControlPlaneServices, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') throw new ApiError('method_not_allowed');
  const { stripe, config } = cardProvider(services.config);
  const raw = await readBody(req, MAX_EVENT_BYTES);
  const event = verified(stripe, config.webhookSecrets, raw, req.headers['stripe-signature']);
  // A card purchase the provider confirmed late is finished before the event is recorded: it is
  // idempotent by itself, so a redelivery after a crash in between finishes it then.
  if (event.type === 'payment_intent.succeeded') await finishCardPurchase(services.db, event.data.object, event.account);
  let wrote = false;
  try {
    wrote = await services.db.$transaction(async (tx) => {
      await tx.providerEvent.create({ data: { id: event.id, type: event.type } });
      return applyProviderEvent(tx, event);
    });
  } catch (err) {
    if (violatedConstraint(err) !== 'unique') throw err;
    sendJson(res, 200, { received: true, duplicate: true });
    return;
  }
  if (wrote) services.accountWrites?.wake();
  services.logger.info({ eventId: event.id, type: event.type }, 'card provider event applied');
  sendJson(res, 200, { received: true, duplicate: false });
}

function verified(stripe: Stripe, secrets: string[], raw: Buffer, header: string | string[] | undefined): Stripe.Event {
  if (typeof header !== 'string') throw new ApiError('invalid_webhook_signature');
  for (const secret of secrets) {
    try {
      return stripe.webhooks.constructEvent(raw, header, secret);
    } catch {
      // Signed with another endpoint's secret, or not at all: try the next, then refuse.
    }
  }
  throw new ApiError('invalid_webhook_signature');
}
