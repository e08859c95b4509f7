import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { listen } from '../../runtime/http-server.js';
import { newId } from '../../shared/ids.js';
import { type SignaturePurpose, sha256Hex, signatureHeader } from '../../shared/signature.js';
import { newToken } from '../../shared/tokens.js';

/** Test helpers: a seller's signing secrets and a client that sends requests as hub would. */
export const kid = newId('signingSecret');
export const secret = newToken('signingSecret');
export const secrets = { [kid]: secret };
export const nowSeconds = () => Math.floor(Date.now() / 1000);

export type Sent = { status: number; headers: IncomingHttpHeaders; text: string; json: any };

export type SignedRequest = {
  method?: string;
  /** Raw request target, sent byte for byte (no URL normalization on the way). */
  path: string;
  body?: string | Buffer;
  requestId?: string;
  agentId?: string;
  buyerId?: string;
  headers?: Record<string, string>;
  purpose?: SignaturePurpose;
  /** Signature overrides: a different timestamp, secret, kid, or a whole header (null: none). */
  timestamp?: number;
  signWith?: { kid: string; secret: string };
  sandbox?: boolean;
  signature?: string | null;
  /** What the signer thinks the body/path were, to forge mismatches. */
  signedBody?: string | Buffer;
  signedPath?: string;
  signedAgentId?: string;
};

export function signFor(r: SignedRequest, requestId: string): string {
  return signatureHeader({
    timestamp: r.timestamp ?? nowSeconds(),
    method: r.method ?? 'GET',
    pathAndQuery: r.signedPath ?? r.path,
    bodySha256: sha256Hex(r.signedBody ?? r.body ?? ''),
    requestId,
    agentId: r.signedAgentId ?? r.agentId,
    purpose: r.purpose,
    kid: r.signWith?.kid ?? kid,
    secret: r.signWith?.secret ?? secret,
    sandbox: r.sandbox,
  });
}

export function send(base: string | number, r: SignedRequest): Promise<Sent> {
  const port = typeof base === 'number' ? base : Number(new URL(base).port);
  const requestId = r.requestId ?? newId('request');
  const headers: Record<string, string> = { 'hub-request-id': requestId, ...r.headers };
  if (r.agentId !== undefined) {
    headers['hub-agent-id'] = r.agentId;
    headers['hub-anonymous-id'] = r.agentId;
  }
  if (r.buyerId !== undefined) headers['hub-buyer-id'] = r.buyerId;
  if (r.requestId === '') delete headers['hub-request-id'];
  const signature = r.signature === undefined ? signFor(r, requestId) : r.signature;
  if (signature !== null) headers['hub-signature'] = signature;
  const body = r.body === undefined ? undefined : Buffer.from(r.body);
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: r.method ?? 'GET', path: r.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Starts a server on a free loopback port and returns its port. */
export function onLoopback(server: Server): Promise<number> {
  return listen(server, 0, '127.0.0.1');
}
