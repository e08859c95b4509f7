// The identity header work the reference proxies do on every GET, as hub does it: a request id
// and an HMAC-SHA256 signature over the canonical string. Shared so the rows stay comparable.
import { createHash, createHmac, randomBytes } from 'node:crypto';

const secret = randomBytes(32).toString('hex');
const emptyBodyHash = createHash('sha256').update('').digest('hex');

export function referenceIdentity(
  method: string | undefined,
  url: string | undefined,
): { 'hub-request-id': string; 'hub-signature': string } {
  const requestId = `hubreq_${randomBytes(18).toString('base64url')}`;
  const t = Math.floor(Date.now() / 1000);
  const canonical = `${t}\n${method}\n${url}\n${emptyBodyHash}\n${requestId}\n`;
  return {
    'hub-request-id': requestId,
    'hub-signature': `t=${t},kid=hsec_benchmark,v1=${createHmac('sha256', secret).update(canonical).digest('hex')}`,
  };
}
