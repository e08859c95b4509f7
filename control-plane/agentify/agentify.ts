import { ApiError } from '../../shared/errors.js';
import type { AgentifiedPage } from '../../shared/schemas/agentify.js';
import { toTimestamp } from '../../shared/schemas/fields.js';
import type { Db } from '../db/client.js';
import { rateLimit } from '../limits/shared-rate-window.js';
import { type ConverterOptions, PageConverter } from './converter.js';
import { ownedHostsOf } from './owned-hosts.js';
import { fetchOwnedPage, type PageLimits, type Resolve, resolveWithSystem } from './page-fetch.js';

/** The spec's limit: 60 conversions a minute per organization. */
export const AGENTIFY_PER_MINUTE = 60;

export const DEFAULT_PAGE_LIMITS: PageLimits = { maxBytes: 5 * 1024 * 1024, timeoutMs: 10_000, maxRedirects: 5 };
export const DEFAULT_CONVERT_TIMEOUT_MS = 15_000;

export type AgentifyOptions = {
  /** How host names become addresses; the system resolver unless a test maps names itself. */
  resolve?: Resolve;
  limits?: Partial<PageLimits>;
  /** The conversion's time limit and how the threads are shared (converter.ts). */
  conversion?: Partial<ConverterOptions>;
};

/**
 * Agentify: a page of a seller's own site as clean markdown for agents. Fetched only from hosts
 * the organization's sellers own (page-fetch.ts), converted off the serving thread (converter.ts),
 * within the organization's budget a minute (shared by every control-plane on PostgreSQL).
 */
export class Agentify {
  private readonly resolve: Resolve;
  private readonly limits: PageLimits;
  private readonly converter: PageConverter;

  constructor(options: AgentifyOptions = {}) {
    this.resolve = options.resolve ?? resolveWithSystem;
    this.limits = { ...DEFAULT_PAGE_LIMITS, ...options.limits };
    this.converter = new PageConverter({ timeoutMs: DEFAULT_CONVERT_TIMEOUT_MS, ...options.conversion });
  }

  async markdown(db: Db, organizationId: string, url: URL): Promise<AgentifiedPage> {
    const retryAfterSeconds = rateLimit(db, 'agentify', AGENTIFY_PER_MINUTE).take(organizationId);
    if (retryAfterSeconds !== undefined) {
      throw new ApiError('rate_limited', `Agentify converts ${AGENTIFY_PER_MINUTE} pages a minute per organization.`, {
        retryAfterSeconds,
      });
    }
    url.hash = '';
    const page = await fetchOwnedPage(url, await ownedHostsOf(db, organizationId), this.resolve, this.limits);
    const converted = await this.converter.convert(organizationId, page.html, page.url.href);
    return { url: page.url.href, seller: page.sellerId, ...converted, fetchedAt: toTimestamp(new Date()) };
  }

  close(): Promise<void> {
    return this.converter.close();
  }
}
