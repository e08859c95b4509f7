import { z } from 'zod';
import { idPrefixes, type IdKind } from '../ids.js';

const NAMES: Record<IdKind, string> = {
  seller: 'seller',
  service: 'service',
  meter: 'meter',
  plan: 'plan',
  planMeterPrice: 'plan meter price',
  apiKey: 'API key',
  signingSecret: 'signing secret',
  agent: 'agent',
  buyer: 'buyer',
  request: 'request',
  usageEvent: 'usage event',
  access: 'access',
  paymentAttempt: 'payment attempt',
  organization: 'organization',
  user: 'user',
  membership: 'membership',
  session: 'session',
  usageEventItem: 'usage event item',
  accountWrite: 'account write',
  pageView: 'page view',
  mail: 'mail',
  registrationChallenge: 'registration challenge',
};

/**
 * A well-formed id of one kind (`sel_` + 24 base62 characters). A malformed id never reaches a
 * lookup: it fails validation with a message that names the expected prefix.
 */
export function idSchema(kind: IdKind) {
  const prefix = idPrefixes[kind];
  return z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`), `must be a ${NAMES[kind]} id (${prefix}_…)`)
    .meta({ example: `${prefix}_0123456789abcdefghijklmn` });
}
