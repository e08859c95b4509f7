/**
 * `lastUsedAt` of API keys and sessions is kept current to the minute, not to the request: a
 * credential used many times a second would otherwise cost a database write per request. The
 * timestamp is rewritten only when it is older than this.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

export function lastUsedIsStale(lastUsedAt: Date | null, now: Date): boolean {
  return lastUsedAt === null || now.getTime() - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
}

/**
 * The `where` of the conditional update: it matches only while the stored value is still stale,
 * so concurrent requests on several control-planes write it once between them.
 */
export function staleLastUsed(id: string, now: Date) {
  return {
    id,
    OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }],
  };
}
