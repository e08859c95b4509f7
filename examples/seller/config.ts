import { type AllowanceOutagePolicy, isUsageQuantity, MAX_USAGE_QUANTITY } from '../../sdk/index.js';
import type { SellerAppOptions } from './app.js';
import type { Meter } from './metered.js';

/**
 * The reference seller's settings from environment variables, for `main.ts`:
 *
 *   SELLER_SIGNING_SECRETS  kid=secret pairs, comma-separated: hsec_…=hubsk_…,hsec_…=hubsk_…  (required)
 *   HUB_API_KEY             an API key with usage:read and usage:write                      (required)
 *   SELLER_SERVICE_SLUG     the service these calls bill to                                 (required)
 *   HUB_BASE_URL            hub's control-plane, default http://127.0.0.1:$HUB_CONTROL_PLANE_PORT (8400)
 *   SELLER_ALLOWANCE_OUTAGE when hub's usage API is down: failClosed (503, the default) or failOpen
 *   SELLER_ID               the sel_… id of this seller: set, its pages are reported to hub (the key
 *                           then needs page-views:write too)
 *   SELLER_METERS           meter=quantity pairs per call, default calls=1
 *   SELLER_PLAN_SLUG        named in 402 bodies when set
 *   SELLER_DB               SQLite file for accounts; unset keeps them in memory
 *   SELLER_PORT, SELLER_HOST  default 8500 on 127.0.0.1
 */
export type SellerConfig = Omit<SellerAppOptions, 'store' | 'usage' | 'pageViews'> & {
  port: number;
  host: string;
  dbFile: string | undefined;
  sellerId: string | undefined;
};

const OUTAGE_POLICIES: readonly AllowanceOutagePolicy[] = ['failClosed', 'failOpen'];

export function sellerConfigFromEnv(env: Record<string, string | undefined>): SellerConfig {
  const problems: string[] = [];
  const required = (name: string) => {
    const value = env[name]?.trim();
    if (!value) problems.push(`${name} is required`);
    return value ?? '';
  };
  const secrets = pairs(required('SELLER_SIGNING_SECRETS'), 'SELLER_SIGNING_SECRETS', problems);
  const meters: Meter[] = Object.entries(pairs(env.SELLER_METERS?.trim() || 'calls=1', 'SELLER_METERS', problems)).map(([meterSlug, q]) => {
    const quantity = Number(q);
    if (!isUsageQuantity(quantity)) problems.push(`SELLER_METERS: ${meterSlug} needs a whole quantity from 0 to ${MAX_USAGE_QUANTITY}`);
    return { meterSlug, quantity };
  });
  const allowanceOutage = (env.SELLER_ALLOWANCE_OUTAGE?.trim() || 'failClosed') as AllowanceOutagePolicy;
  if (!OUTAGE_POLICIES.includes(allowanceOutage)) problems.push('SELLER_ALLOWANCE_OUTAGE must be failClosed or failOpen');
  const sellerId = env.SELLER_ID?.trim() || undefined;
  if (sellerId !== undefined && !/^sel_[0-9A-Za-z]{24}$/.test(sellerId)) problems.push('SELLER_ID must be a seller id (sel_…)');
  const port = Number(env.SELLER_PORT ?? 8500);
  if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push('SELLER_PORT must be a port number');
  const config: SellerConfig = {
    secrets,
    hub: {
      baseUrl: env.HUB_BASE_URL?.trim() || `http://127.0.0.1:${env.HUB_CONTROL_PLANE_PORT?.trim() || 8400}`,
      apiKey: required('HUB_API_KEY'),
      allowanceOutage,
    },
    serviceSlug: required('SELLER_SERVICE_SLUG'),
    meters,
    planSlug: env.SELLER_PLAN_SLUG?.trim() || undefined,
    port,
    host: env.SELLER_HOST?.trim() || '127.0.0.1',
    dbFile: env.SELLER_DB?.trim() || undefined,
    sellerId,
  };
  if (problems.length) throw new Error(problems.join('; '));
  return config;
}

function pairs(value: string, name: string, problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of value.split(',').filter(Boolean)) {
    const at = part.indexOf('=');
    if (at <= 0 || at === part.length - 1) {
      problems.push(`${name}: "${part.slice(0, 12)}…" is not name=value`);
      continue;
    }
    out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}
