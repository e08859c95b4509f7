import { CompactEncrypt, importJWK } from 'jose';
import type { Jwks } from '../../shared/encryption/suite.js';
import type { ManagementClient } from './management.js';

/**
 * Encryption keys made through the management API, and the wait until the pay URL publishes them
 * (the proxy learns of catalog changes within a second).
 */
export async function addEncryptionKey(api: ManagementClient, apiKey: string, sellerId: string): Promise<string> {
  const reply = await api.post(`/v1/sellers/${sellerId}/encryption-keys`, apiKey);
  if (reply.status !== 201) throw new Error(`creating an encryption key failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.encryptionKey.id as string;
}

export async function retireEncryptionKey(api: ManagementClient, apiKey: string, sellerId: string, kid: string): Promise<void> {
  const reply = await api.post(`/v1/sellers/${sellerId}/encryption-keys/${kid}/retire`, apiKey);
  if (reply.status !== 200) throw new Error(`retiring an encryption key failed: ${reply.status}`);
}

/** Polls the JWKS until it lists exactly `kids` (newest first); returns it. */
export async function jwksListing(fetchJwks: () => Promise<Jwks>, kids: string[]): Promise<Jwks> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const jwks = await fetchJwks();
    if (JSON.stringify(jwks.keys.map((k) => k.kid)) === JSON.stringify(kids)) return jwks;
    if (Date.now() > deadline) throw new Error(`the JWKS still lists ${jwks.keys.map((k) => k.kid).join(', ') || 'nothing'}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A JWE encrypted with any header an agent could send (faulty ones included), to `jwk`. */
export async function craftJwe(jwk: { x: string; y: string }, header: Record<string, unknown>, plaintext = '{}'): Promise<string> {
  const alg = String(header.alg ?? 'ECDH-ES');
  const key = await importJWK({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, alg);
  return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader({ alg, enc: 'A256GCM', ...header }).encrypt(key);
}
