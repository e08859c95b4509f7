/**
 * Where a pay URL serves its discovery documents (docs/decisions.md#D-216): the paths the
 * standards fix, so crawlers and agents find them without being told. Reserved on every pay URL,
 * never forwarded to the seller.
 */
export const DISCOVERY_PATHS = {
  /** OpenAPI of the priced routes: MPP's draft-payment-discovery fixes `/openapi.json`, x402 crawlers read it first. */
  openapi: '/openapi.json',
  /** llmstxt.org fixes `/llms.txt` at the root. */
  llmsTxt: '/llms.txt',
} as const;

export type DiscoveryPath = (typeof DISCOVERY_PATHS)[keyof typeof DISCOVERY_PATHS];

export function isDiscoveryPath(path: string): path is DiscoveryPath {
  return path === DISCOVERY_PATHS.openapi || path === DISCOVERY_PATHS.llmsTxt;
}
