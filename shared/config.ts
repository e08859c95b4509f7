import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type OrganizationPlanOffer, parseOrganizationPlans } from './card-payments/organization-plans.js';
import { parseUsd, usdToMicros } from './money.js';

/**
 * hub's configuration, read from the environment and validated in one place. Each process picks
 * what it needs; a bad value stops start-up with one line naming the variable.
 */

/** A whole number written in plain decimal: `Number()` would also take `0x1f40`, `1e3` or blanks. */
const decimal = (error: string) =>
  z
    .string()
    .trim()
    .regex(/^\d{1,15}$/, error)
    .transform(Number);

const portNumber = decimal('must be a port number (1 to 65535, in decimal)').pipe(
  z.number().min(1, 'must be between 1 and 65535').max(65535, 'must be between 1 and 65535'),
);

const port = (fallback: number) => portNumber.default(fallback);

const positiveInt = (fallback: number) =>
  decimal('must be a whole number in decimal').pipe(z.number().min(1, 'must be at least 1')).default(fallback);

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** An IP address, or a hostname that does not merely look like a malformed one (`999.1.1.1`). */
function isBindableAddress(value: string): boolean {
  if (isIP(value) !== 0) return true;
  return HOSTNAME.test(value.toLowerCase()) && !/^[\d.]+$/.test(value);
}

const hostname = z.string().toLowerCase().regex(HOSTNAME, 'must be a hostname such as pay.example.com');

export type DatabaseConfig = { provider: 'sqlite'; url: string; file: string } | { provider: 'postgresql'; url: string };

/** `file:./data/hub.db` (SQLite) or `postgresql://…` / `postgres://…`. */
export function parseDatabaseUrl(url: string): DatabaseConfig {
  if (url.startsWith('file:')) {
    const file = url.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    if (!file || file.includes('?')) throw new Error('a file: URL needs a path, such as file:./data/hub.db');
    return { provider: 'sqlite', url, file };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error('is not a valid postgresql:// URL');
    }
    if (!parsed.hostname) throw new Error('a postgresql:// URL needs a host');
    if (parsed.pathname.length <= 1) throw new Error('a postgresql:// URL needs a database name');
    return { provider: 'postgresql', url };
  }
  throw new Error('must start with file: (SQLite) or postgresql:// (PostgreSQL)');
}

/** A 32-byte key written as 64 hex characters or base64; undefined when it is neither. */
export function parseMasterKey(value: string): Buffer | undefined {
  const trimmed = value.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

/**
 * How long a paid call may stay claimed before it is taken for stranded (`HUB_STRANDED_CALL_MS`,
 * docs/decisions.md#D-329): also how long a session's call holds its channel (D-354).
 */
export const STRANDED_CALL_MS_DEFAULT = 15 * 60_000;

const masterKey = z.string().transform((value, ctx) => {
  const bytes = parseMasterKey(value);
  if (!bytes) {
    ctx.addIssue({ code: 'custom', message: 'must be 32 bytes, as 64 hex characters or base64' });
    return z.NEVER;
  }
  return bytes;
});

const envSchema = z.object({
  HUB_ENV: z.enum(['development', 'production', 'test']).optional(),
  NODE_ENV: z.string().optional(),
  HUB_HOST: z
    .string()
    .trim()
    .refine(isBindableAddress, 'must be an IP address or a hostname, such as 127.0.0.1, :: or localhost')
    .default('127.0.0.1'),
  HUB_CONTROL_PLANE_PORT: port(8400),
  HUB_PROXY_PORT: port(8402),
  HUB_PROXY_METRICS_PORT: portNumber.optional(),
  HUB_PROXY_WORKERS: decimal('must be a whole number in decimal')
    .pipe(z.number().min(1, 'must be at least 1').max(256, 'must be at most 256'))
    .optional(),
  HUB_CONTROL_PLANE_URL: z.url({ error: 'must be an http(s) URL' }).optional(),
  HUB_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  DATABASE_URL: z.string().default('file:./data/hub.db'),
  HUB_DATA_DIR: z.string().min(1).default('./data'),
  HUB_PAY_DOMAIN: hostname.default('pay.localhost'),
  HUB_MASTER_KEY: masterKey.optional(),
  HUB_INTERNAL_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  HUB_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HUB_ACCESS_LOG: z.enum(['on', 'off']).default('on'),
  HUB_SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'must be an smtp:// or smtps:// URL, such as smtps://user:password@mail.example.com')
    .optional(),
  HUB_MAIL_FROM: z.string().min(3).max(200).optional(),
  HUB_MAX_BODY_BYTES: positiveInt(1_048_576),
  HUB_MAX_ENCRYPTED_RESPONSE_BYTES: positiveInt(16_777_216),
  HUB_JWE_MODE: z.enum(['inline', 'spare', 'pool']).default('spare'),
  HUB_INTERNAL_CALLS: z.enum(['direct', 'adapter']).default('direct'),
  HUB_JWE_THREADS: decimal('must be a whole number in decimal').pipe(z.number().min(1).max(64, 'must be at most 64')).default(1),
  HUB_UPSTREAM_CONNECT_TIMEOUT_MS: positiveInt(5_000),
  HUB_UPSTREAM_HEADERS_TIMEOUT_MS: positiveInt(30_000),
  HUB_UPSTREAM_BODY_TIMEOUT_MS: positiveInt(60_000),
  HUB_TRUST_PROXY: z.enum(['on', 'off']).default('off'),
  HUB_PRIVATE_UPSTREAMS: z.enum(['on', 'off']).default('on'),
  HUB_CHAIN_FILE: z.string().min(1).optional(),
  HUB_DEV_CHAIN: z.enum(['auto', 'off']).default('auto'),
  HUB_REQUEST_TIMEOUT_MS: positiveInt(30_000),
  HUB_REQUEST_IDLE_TIMEOUT_MS: positiveInt(10_000),
  HUB_DELIVERY_LEASE_MS: positiveInt(60_000),
  HUB_SESSIONS_CLAIM_INTERVAL_S: positiveInt(60),
  HUB_SESSIONS_SETTLE_INTERVAL_S: positiveInt(3_600),
  // Under half a day: a payer's withdrawal waits a day (docs/decisions.md#D-283), and hub must see
  // it and claim well before it can be finalized.
  HUB_SESSIONS_WITHDRAW_WATCH_S: decimal('must be a whole number in decimal')
    .pipe(z.number().min(1, 'must be at least 1').max(43_200, 'must be at most 43200 (half the withdrawal delay)'))
    .default(60),
  // A day without a voucher: what a payer's own timed withdrawal would take (docs/decisions.md#D-334).
  HUB_SESSIONS_IDLE_REFUND_S: positiveInt(86_400),
  HUB_SESSIONS_CLAIM_AT_USD: z
    .string()
    .trim()
    .refine((value) => parseUsd(value).ok, 'must be a USD amount such as 1.00, with at most six decimals')
    .transform(usdToMicros)
    .pipe(z.bigint().min(1n, 'must be more than 0'))
    .default(1_000_000n),
  HUB_PENDING_INTERVAL_MS: positiveInt(15_000),
  HUB_STRANDED_CALL_MS: positiveInt(STRANDED_CALL_MS_DEFAULT),
  HUB_RESTART_HEALTHY_AFTER_MS: positiveInt(10_000),
  HUB_PAGE_VIEWS_PER_MINUTE: positiveInt(600_000),
  // The card provider (Stripe): all three keys, or none (card routes then answer 503).
  HUB_STRIPE_SECRET_KEY: z
    .string()
    .trim()
    .regex(/^(sk|rk)_(test|live)_[A-Za-z0-9_]+$/, 'must be a Stripe secret or restricted key (sk_… or rk_…)')
    .optional(),
  HUB_STRIPE_PUBLISHABLE_KEY: z
    .string()
    .trim()
    .regex(/^pk_(test|live)_[A-Za-z0-9_]+$/, 'must be a Stripe publishable key (pk_…)')
    .optional(),
  HUB_STRIPE_WEBHOOK_SECRET: z
    .string()
    .trim()
    .regex(/^whsec_[A-Za-z0-9_]+(,whsec_[A-Za-z0-9_]+)*$/, 'must be one or more webhook signing secrets (whsec_…), separated by commas')
    .optional(),
  HUB_STRIPE_TIMEOUT_MS: positiveInt(10_000),
  HUB_STRIPE_MAX_RETRIES: decimal('must be a whole number in decimal').pipe(z.number().max(5, 'must be at most 5')).default(2),
  HUB_ORGANIZATION_PLANS: z.string().optional(),
});

/** The card provider's keys and how hub calls it; absent when no keys are configured. */
export type CardPaymentsConfig = {
  secretKey: string;
  publishableKey: string;
  /** Each webhook endpoint at the provider signs with its own secret (the platform's, Connect's). */
  webhookSecrets: string[];
  timeoutMs: number;
  /** The SDK's own retries of a failed call, with the same idempotency key. */
  maxNetworkRetries: number;
  /**
   * The secret key is one of the provider's test-mode keys (`sk_test_…`, `rk_test_…`): its charges
   * move no money, so sandbox sellers may be offered cards (docs/decisions.md#D-302).
   */
  testMode: boolean;
};

export type HubConfig = {
  env: 'development' | 'production' | 'test';
  host: string;
  controlPlane: {
    port: number;
    url: string;
    /**
     * How the proxy's hot-path calls are answered: `direct` (the procedure through tRPC's
     * `callTRPCProcedure`, answered from node:http) or `adapter` (tRPC's node adapter, as every
     * other internal call). Both answer byte for byte alike; `adapter` exists to measure the cost.
     */
    internalCalls: 'direct' | 'adapter';
  };
  proxy: {
    port: number;
    /** Where the proxy serves `GET /metrics`; unset, nowhere (never on the pay URL's port). */
    metricsPort: number | undefined;
    /** Processes serving the pay URL's port (cli/proxy-workers.ts); by default one per core. */
    workers: number;
    /** Request bodies are buffered (the signature covers their hash) up to this size; larger is 413. */
    maxBodyBytes: number;
    /** Upstream timeouts: connecting, waiting for response headers, and between body chunks. */
    connectTimeoutMs: number;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    /** A reverse proxy in front reports the agent's scheme and host in X-Forwarded-Proto / -Host. */
    trustProxy: boolean;
    /** A response to an encrypted request is read whole to be encrypted (event streams aside), up to this size. */
    maxEncryptedResponseBytes: number;
    /** Where JWE work runs (proxy/encryption/jwe-codec.ts; bench/jwe.ts compares the three). */
    jweMode: 'inline' | 'spare' | 'pool';
    /** Worker threads for `spare` and `pool`. */
    jweThreads: number;
  };
  /**
   * How long either port waits for a client's request: all of its head and body, and any pause
   * while it arrives. Slower clients get a 408; waiting on hub's own work does not count.
   */
  requests: { timeoutMs: number; idleTimeoutMs: number };
  database: DatabaseConfig;
  dataDir: string;
  /** Where `hub chain up` describes the local chain, and where development looks for it. */
  chainFile: string;
  /** In development, `hub start` runs a local chain itself when no payment rail is configured. */
  devChain: 'auto' | 'off';
  payDomain: string;
  /**
   * Sellers' upstreams (and account endpoints, and agentify's pages) may be on loopback and
   * private addresses: hub usually runs beside the seller's API. Off for a multi-tenant
   * installation, where those addresses are hub's own network (runtime/upstream-addresses.ts).
   */
  privateUpstreams: boolean;
  /** Absent only outside production; the runtime then uses a generated development key. */
  masterKey: Buffer | undefined;
  internalToken: string | undefined;
  logLevel: z.infer<typeof envSchema>['HUB_LOG_LEVEL'];
  /** An OTLP/HTTP collector's base URL: traces go to `<it>/v1/traces`. Unset: no tracing at all. */
  otlpEndpoint: string | undefined;
  /** One log line per request at info, on both ports. */
  accessLog: boolean;
  /**
   * Where mail goes: an SMTP server, or (outside production, without one) `.eml` files under the
   * data directory. `from` is the sender every mail names.
   */
  mail: { smtpUrl: string | undefined; from: string };
  /**
   * How long a control-plane holds an account write it is delivering; one that died mid-delivery
   * lets go of it after this.
   */
  delivery: { leaseMs: number };
  /**
   * Sessions' claims and settlements (docs/decisions.md#D-290, #D-303, #D-305): how often what was
   * charged is claimed, how often what was claimed is sent to sellers, and the unclaimed amount on
   * one channel that is claimed at once.
   */
  sessions: {
    claimIntervalMs: number;
    settleIntervalMs: number;
    claimAtMicros: bigint;
    withdrawWatchIntervalMs: number;
    idleRefundMs: number;
  };
  /**
   * How often the control-plane finishes payments left pending (storefront/pending-loop.ts), and
   * how long a paid call stays in flight before it is taken for stranded and released.
   */
  pending: { intervalMs: number; strandedCallMs: number };
  /** Page views one organization may report a minute; beyond it, 429. */
  pageViews: { perMinute: number };
  /**
   * `hub start`: a process that ran at least this long before it exited is restarted at once;
   * one that exits sooner is in a crash loop and waits (cli/restart-policy.ts).
   */
  restart: { healthyAfterMs: number };
  /** Card payments through the provider (control-plane/card-payments/); undefined without keys. */
  cardPayments: CardPaymentsConfig | undefined;
  /** hub's own plans for organizations (shared/card-payments/organization-plans.ts). */
  organizationPlans: readonly OrganizationPlanOffer[];
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type HubMode = 'development' | 'production' | 'test';

/**
 * HUB_ENV, else `production` or `test` from NODE_ENV, else development. A HUB_ENV hub does not know
 * counts as production, the strictest (loadConfig refuses it anyway).
 */
export function hubMode(env: Record<string, string | undefined> = process.env): HubMode {
  const given = env.HUB_ENV?.trim();
  if (given) return given === 'development' || given === 'test' ? given : 'production';
  return env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'test' ? 'test' : 'development';
}

/** Reads and validates the configuration; throws a `ConfigError` whose message is one line. */
export function loadConfig(env: Record<string, string | undefined> = process.env): HubConfig {
  const blankToUndefined = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === '' ? undefined : v]));
  const result = envSchema.safeParse(blankToUndefined);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(`${String(issue.path[0])} ${issue.message}`);
  }
  const e = result.data;
  const mode = hubMode({ HUB_ENV: e.HUB_ENV, NODE_ENV: e.NODE_ENV });

  let database: DatabaseConfig;
  try {
    database = parseDatabaseUrl(e.DATABASE_URL);
  } catch (err) {
    throw new ConfigError(`DATABASE_URL ${(err as Error).message}`);
  }
  if (mode === 'production' && !e.HUB_MASTER_KEY) {
    throw new ConfigError('HUB_MASTER_KEY is required in production (32 bytes, as 64 hex characters or base64)');
  }
  if (mode === 'production' && !e.HUB_SMTP_URL) {
    throw new ConfigError('HUB_SMTP_URL is required in production (smtp:// or smtps://, with credentials): hub mails buyers');
  }
  // Released while the seller may still answer, a call could be served and then find nothing to
  // settle: the seller's time comes first (docs/decisions.md#D-329).
  const sellerMayTakeMs = e.HUB_UPSTREAM_HEADERS_TIMEOUT_MS + e.HUB_UPSTREAM_BODY_TIMEOUT_MS;
  if (e.HUB_STRANDED_CALL_MS <= sellerMayTakeMs) {
    throw new ConfigError(
      `HUB_STRANDED_CALL_MS must be longer than a seller may take to answer (HUB_UPSTREAM_HEADERS_TIMEOUT_MS + HUB_UPSTREAM_BODY_TIMEOUT_MS = ${sellerMayTakeMs} ms)`,
    );
  }
  if (e.HUB_CONTROL_PLANE_URL && !/^https?:\/\//.test(e.HUB_CONTROL_PLANE_URL)) {
    throw new ConfigError('HUB_CONTROL_PLANE_URL must be an http(s) URL');
  }

  let organizationPlans: readonly OrganizationPlanOffer[];
  try {
    organizationPlans = parseOrganizationPlans(e.HUB_ORGANIZATION_PLANS);
  } catch (err) {
    throw new ConfigError(`HUB_ORGANIZATION_PLANS ${(err as Error).message}`);
  }

  return {
    env: mode,
    host: e.HUB_HOST,
    controlPlane: {
      port: e.HUB_CONTROL_PLANE_PORT,
      url: (e.HUB_CONTROL_PLANE_URL ?? `http://127.0.0.1:${e.HUB_CONTROL_PLANE_PORT}`).replace(/\/+$/, ''),
      internalCalls: e.HUB_INTERNAL_CALLS,
    },
    proxy: {
      port: e.HUB_PROXY_PORT,
      metricsPort: e.HUB_PROXY_METRICS_PORT,
      workers: e.HUB_PROXY_WORKERS ?? availableParallelism(),
      maxBodyBytes: e.HUB_MAX_BODY_BYTES,
      maxEncryptedResponseBytes: e.HUB_MAX_ENCRYPTED_RESPONSE_BYTES,
      jweMode: e.HUB_JWE_MODE,
      jweThreads: e.HUB_JWE_THREADS,
      connectTimeoutMs: e.HUB_UPSTREAM_CONNECT_TIMEOUT_MS,
      headersTimeoutMs: e.HUB_UPSTREAM_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: e.HUB_UPSTREAM_BODY_TIMEOUT_MS,
      trustProxy: e.HUB_TRUST_PROXY === 'on',
    },
    requests: {
      timeoutMs: e.HUB_REQUEST_TIMEOUT_MS,
      idleTimeoutMs: Math.min(e.HUB_REQUEST_IDLE_TIMEOUT_MS, e.HUB_REQUEST_TIMEOUT_MS),
    },
    database,
    dataDir: e.HUB_DATA_DIR,
    chainFile: e.HUB_CHAIN_FILE ?? join(e.HUB_DATA_DIR, 'chain.json'),
    devChain: e.HUB_DEV_CHAIN,
    payDomain: e.HUB_PAY_DOMAIN,
    privateUpstreams: e.HUB_PRIVATE_UPSTREAMS === 'on',
    masterKey: e.HUB_MASTER_KEY,
    internalToken: e.HUB_INTERNAL_TOKEN,
    logLevel: e.HUB_LOG_LEVEL,
    otlpEndpoint: e.HUB_OTLP_ENDPOINT?.replace(/\/+$/, ''),
    accessLog: e.HUB_ACCESS_LOG === 'on',
    mail: { smtpUrl: e.HUB_SMTP_URL, from: e.HUB_MAIL_FROM ?? `hub <no-reply@${e.HUB_PAY_DOMAIN}>` },
    delivery: { leaseMs: e.HUB_DELIVERY_LEASE_MS },
    sessions: {
      claimIntervalMs: e.HUB_SESSIONS_CLAIM_INTERVAL_S * 1000,
      settleIntervalMs: e.HUB_SESSIONS_SETTLE_INTERVAL_S * 1000,
      claimAtMicros: e.HUB_SESSIONS_CLAIM_AT_USD,
      withdrawWatchIntervalMs: e.HUB_SESSIONS_WITHDRAW_WATCH_S * 1000,
      idleRefundMs: e.HUB_SESSIONS_IDLE_REFUND_S * 1000,
    },
    pending: { intervalMs: e.HUB_PENDING_INTERVAL_MS, strandedCallMs: e.HUB_STRANDED_CALL_MS },
    pageViews: { perMinute: e.HUB_PAGE_VIEWS_PER_MINUTE },
    restart: { healthyAfterMs: e.HUB_RESTART_HEALTHY_AFTER_MS },
    cardPayments: cardPaymentsOf(e),
    organizationPlans,
  };
}

/** All three provider keys or none: a half-configured provider is a configuration error, said at start. */
function cardPaymentsOf(e: z.infer<typeof envSchema>): CardPaymentsConfig | undefined {
  const keys = {
    HUB_STRIPE_SECRET_KEY: e.HUB_STRIPE_SECRET_KEY,
    HUB_STRIPE_PUBLISHABLE_KEY: e.HUB_STRIPE_PUBLISHABLE_KEY,
    HUB_STRIPE_WEBHOOK_SECRET: e.HUB_STRIPE_WEBHOOK_SECRET,
  };
  const missing = Object.entries(keys)
    .filter(([, value]) => value === undefined)
    .map(([name]) => name);
  if (missing.length === 3) return undefined;
  if (missing.length > 0) throw new ConfigError(`${missing.join(' and ')} must be set too: card payments need all three provider keys`);
  return {
    secretKey: e.HUB_STRIPE_SECRET_KEY!,
    publishableKey: e.HUB_STRIPE_PUBLISHABLE_KEY!,
    webhookSecrets: e.HUB_STRIPE_WEBHOOK_SECRET!.split(','),
    timeoutMs: e.HUB_STRIPE_TIMEOUT_MS,
    maxNetworkRetries: e.HUB_STRIPE_MAX_RETRIES,
    testMode: /^(sk|rk)_test_/.test(e.HUB_STRIPE_SECRET_KEY!),
  };
}
