import { CODE_WORDS } from './error-words';

/**
 * The dashboard's only way to hub: the public `/v1` API on its own origin, signed in by the
 * session cookie. Writes echo the `__Host-hub_csrf` cookie in `x-hub-csrf`, which the control-plane
 * requires of every cookie-signed write.
 */

/** A refusal in the API's `{ error, reason? }` envelope, with the messages it gives per field. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly reason: string | undefined,
    readonly fields: Record<string, string>,
  ) {
    super(reason ?? code);
  }
}

/** The control-plane's readable cookie with the session's CSRF token (auth/session-cookie.ts). */
const CSRF_COOKIE = '__Host-hub_csrf';

/** Told when the session is gone (401): the app shows sign-in again. */
export const signedOut = new EventTarget();

function csrfToken(): string {
  const found = document.cookie.split('; ').find((part) => part.startsWith(`${CSRF_COOKIE}=`));
  return found ? found.slice(CSRF_COOKIE.length + 1) : '';
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-hub-csrf'] = csrfToken();
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  if (response.status === 204) return undefined as T;
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.ok) return json as T;
  if (response.status === 401 && path !== '/auth/sign-in') signedOut.dispatchEvent(new Event('signed-out'));
  const code = typeof json.error === 'string' ? json.error : `HTTP ${response.status}`;
  const words = CODE_WORDS[code];
  const reason = typeof json.reason === 'string' ? json.reason : (words?.text ?? code.replaceAll('_', ' '));
  // A 400's `error` is the validation message itself; other refusals explain in `reason`.
  const message = response.status === 400 ? code : (reason ?? code);
  const fields = fieldMessages(message);
  if (words?.field && !fields[words.field]) fields[words.field] = message;
  throw new ApiFailure(response.status, code, message, fields);
}

/**
 * The API names the field a message is about as its prefix (`slug: must be lowercase …`, several
 * joined by `; `), so each can be shown beside its own input.
 */
export function fieldMessages(message: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of message.split('; ')) {
    const match = /^([A-Za-z][\w.]*): (.+)$/s.exec(part);
    if (match) fields[match[1]!.split('.')[0]!] = match[2]!;
  }
  return fields;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}) => api<T>('POST', path, body);
export const put = <T>(path: string, body: unknown) => api<T>('PUT', path, body);
export const del = (path: string) => api<void>('DELETE', path);
