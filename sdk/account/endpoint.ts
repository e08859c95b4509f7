import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../../runtime/respond.js';
import { ApiError, errorResponse } from '../../shared/errors.js';
import { HUB_HEADERS, headerValue } from '../../shared/hub-headers.js';
import { isId } from '../../shared/ids.js';
import type { SignaturePurpose } from '../../shared/signature.js';
import type { HubIdentity } from '../identity.js';
import { rejection } from '../rejection.js';
import { readAndCheck, type VerifyOptions } from '../verify-request.js';
import type { Account } from './account.js';
import { type MintRequest, parseMintRequest } from './mint-body.js';
import { applyAccountWrite, type WriteOutcome } from './netting.js';
import { type MintDecision, mintReply, type Reply, UNKNOWN_ACCOUNT, type WriteReply, writeReply } from './replies.js';
import type { AccountStore } from './store.js';
import { type AccountWrite, parseAccountWrite } from './write-body.js';

/**
 * The seller's account endpoint (spec: Seller account endpoint): `POST {path}` takes account
 * writes, `POST {path}/{accessId}/keys` mints keys. Every request is checked in the spec's order
 * before a hook runs: signature with the route's purpose (401 naming the reason), then body and
 * the headers it must agree with (400 with a readable message in `error`).
 */
export const DEFAULT_ACCOUNT_PATH = '/zeroclick/access';
/** Account bodies are small; a larger one is not from hub. */
const DEFAULT_MAX_ACCOUNT_BODY_BYTES = 64 * 1024;

export type WriteEvent = { outcome: WriteOutcome | undefined; periodRenewed: boolean };
export type MintContext = MintRequest & { identity: HubIdentity };

export type AccountEndpointOptions = VerifyOptions & {
  store: AccountStore;
  /** Defaults to `/zeroclick/access`; set it when `accessEndpointUrl` points elsewhere. */
  path?: string;
  /**
   * Whether the account is ready: answered to every write delivery (`outcome` is undefined when
   * asked before a mint). Return `provisioning` while setting up takes longer than hub's 7 s budget;
   * hub then resends the write, and mints get 409 `notProvisioned`. Once this says `active`, start
   * nothing irreversible for this write. Defaults to always active.
   */
  lifecycle?: (account: Account, event: WriteEvent) => WriteReply | Promise<WriteReply>;
  /** Issues a key for an account that exists, belongs to the caller and is ready. */
  mintKey: (account: Account, context: MintContext) => MintDecision | Promise<MintDecision>;
  /** Told about every handler failure answered with 503 (log it; hub retries writes). */
  onError?: (err: unknown) => void;
};

export type AccountEndpoint = {
  path: string;
  /** Answers the request if it is for an account route and returns true; otherwise returns false untouched. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
};

type Route = { purpose: 'access.write' } | { purpose: 'access.mint'; accessId: string };

export function createAccountEndpoint(options: AccountEndpointOptions): AccountEndpoint {
  const path = (options.path ?? DEFAULT_ACCOUNT_PATH).replace(/\/+$/, '');
  const verify: VerifyOptions = { ...options, maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_ACCOUNT_BODY_BYTES };
  const lifecycle = options.lifecycle ?? ((): WriteReply => ({ lifecycle: 'active' }));

  function match(url: string): Route | undefined {
    const pathname = url.split('?', 1)[0]!;
    if (pathname === path) return { purpose: 'access.write' };
    if (!pathname.startsWith(`${path}/`) || !pathname.endsWith('/keys')) return undefined;
    const accessId = pathname.slice(path.length + 1, -'/keys'.length);
    return accessId && !accessId.includes('/') ? { purpose: 'access.mint', accessId: decodeSegment(accessId) } : undefined;
  }

  async function write(identity: HubIdentity, headers: IncomingMessage['headers'], body: unknown): Promise<Reply> {
    const parsed = parseAccountWrite(body);
    if (!parsed.ok) throw ApiError.validation(parsed.message);
    const w = parsed.value;
    checkAgent(identity, w.agentId);
    if (w.idempotencyKey !== `${w.accessId}:${w.stateVersion}`) throw ApiError.validation('idempotencyKey must be accessId:stateVersion');
    if (w.idempotencyKey !== identity.requestId)
      throw ApiError.validation(`idempotencyKey does not match the signed ${HUB_HEADERS.requestId} header`);
    if (w.variant === 'later') checkBuyer(headers, w);

    const applied = await options.store.update(w.accessId, (current) => {
      const result = applyAccountWrite(current, w);
      return { account: result.outcome === 'replay' ? undefined : result.account, result };
    });
    if (w.buyerId !== null) await options.store.linkAgent(w.agentId, w.buyerId);
    return writeReply(await lifecycle(applied.account, { outcome: applied.outcome, periodRenewed: applied.periodRenewed }));
  }

  async function mint(identity: HubIdentity, headers: IncomingMessage['headers'], accessId: string, body: unknown): Promise<Reply> {
    const parsed = parseMintRequest(body);
    if (!parsed.ok) throw ApiError.validation(parsed.message);
    const m = parsed.value;
    checkAgent(identity, m.agentId);
    if (m.variant === 'later') checkBuyer(headers, m);

    const account = isId('access', accessId) ? await options.store.get(accessId) : undefined;
    if (account === undefined) return UNKNOWN_ACCOUNT;
    // An account is minted for its own agent, or for another agent of its buyer when hub vouched
    // for that buyer in this signed body. To anyone else it does not exist.
    const viaBuyer = account.agentId !== m.agentId && account.buyerId !== null && m.buyerId === account.buyerId;
    if (account.agentId !== m.agentId && !viaBuyer) return UNKNOWN_ACCOUNT;
    if (viaBuyer) await options.store.linkAgent(m.agentId, account.buyerId!);

    const ready = await lifecycle(account, { outcome: undefined, periodRenewed: false });
    if (ready?.lifecycle === 'provisioning') return mintReply({ notProvisioned: true, retryAfterSeconds: ready.retryAfterSeconds });
    return mintReply(await options.mintKey(account, { ...m, identity }));
  }

  return {
    path,
    async handle(req, res) {
      const route = match(req.url ?? '/');
      if (route === undefined) return false;
      if (req.method !== 'POST') {
        req.resume();
        sendJson(res, 405, { error: 'method_not_allowed' }, { allow: 'POST' });
        return true;
      }
      let reply: Reply;
      try {
        const purpose: SignaturePurpose = route.purpose;
        const checked = await readAndCheck(req, { method: req.method, url: req.url ?? '/', headers: req.headers }, verify, purpose);
        if (!checked.ok) {
          const { status, body } = rejection(checked.failure, 'account');
          sendJson(res, status, body);
          return true;
        }
        const body = parseJson(checked.body);
        reply =
          route.purpose === 'access.write'
            ? await write(checked.identity, req.headers, body)
            : await mint(checked.identity, req.headers, route.accessId, body);
      } catch (err) {
        if (err instanceof ApiError) {
          const { status, body } = errorResponse(err);
          reply = { status, body };
        } else {
          // Store down, hook threw or broke the contract: temporary, so hub retries (writes) or fails the mint.
          options.onError?.(err);
          reply = { status: 503, body: { error: 'service_unavailable' } };
        }
      }
      sendJson(res, reply.status, reply.body, reply.headers);
      return true;
    },
  };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw ApiError.validation('the body is not valid JSON');
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function checkAgent(identity: HubIdentity, agentId: string): void {
  if (identity.agentId !== agentId) throw ApiError.validation(`the agent does not match the signed ${HUB_HEADERS.agentId} header`);
}

/** The later variant: buyer id and email must equal their headers (absent header = null). */
function checkBuyer(headers: IncomingMessage['headers'], body: Pick<AccountWrite, 'buyerId' | 'buyerEmail'>): void {
  if ((headerValue(headers, HUB_HEADERS.buyerId) ?? null) !== body.buyerId)
    throw ApiError.validation(`buyerId does not match the ${HUB_HEADERS.buyerId} header`);
  if ((headerValue(headers, HUB_HEADERS.buyerEmail) ?? null) !== body.buyerEmail)
    throw ApiError.validation(`buyerEmail does not match the ${HUB_HEADERS.buyerEmail} header`);
}
