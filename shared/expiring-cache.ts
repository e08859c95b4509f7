/**
 * A map whose entries expire after a time to live, bounded in size (past the bound it starts over:
 * a cache in front of the database must never grow with hostile input). `get` answers `undefined`
 * for a miss, so a cached `null` ("known to be nothing") is a hit.
 */
export class ExpiringCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  constructor(private readonly options: { ttlMs: number; maxEntries: number }) {}

  get(key: K, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Remembers `value` for the cache's time to live, or for `ttlMs` when given. */
  set(key: K, value: V, ttlMs = this.options.ttlMs, now = Date.now()): void {
    if (this.entries.size >= this.options.maxEntries && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, { value, expiresAt: now + ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches. */
  deleteWhere(matches: (value: V, key: K) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
