/**
 * The seller's account endpoint (spec: Seller account endpoint): the origin of the upstream base
 * URL plus `/zeroclick/access`, any path dropped, unless the seller set an override. Key mints
 * go to `{endpoint}/{accessId}/keys`.
 */
export function accessEndpointUrlOf(seller: { upstreamBaseUrl: string; accessEndpointUrl: string | null }): string {
  return seller.accessEndpointUrl ?? `${new URL(seller.upstreamBaseUrl).origin}/zeroclick/access`;
}
