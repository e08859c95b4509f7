import { createHmac } from 'node:crypto';
import { isbot } from 'isbot';

/**
 * Who viewed a page, without keeping who they are: an anonymous viewer id and a viewer class.
 *
 * The id is an HMAC of the visitor's IP and user agent under a key derived from the master key
 * and the UTC day, so it counts one viewer within a day but cannot be reversed, nor joined with
 * the same visitor's id on another day. Neither input is stored or logged.
 *
 * The class comes from isbot's maintained list of bots and crawlers; among those, AI assistants
 * fetching a page for a person (as opposed to indexing it) are `agent`.
 */
export type ViewerClass = 'human' | 'agent' | 'crawler' | 'unknown';

/** Fetchers that act for a person at the moment of the request (their operators' own names for them). */
const AI_AGENTS =
  /(ChatGPT-User|OAI-SearchBot|Claude-User|Claude-SearchBot|Perplexity-User|MistralAI-User|Gemini-Deep-Research|DuckAssistBot|Google-Agent)/i;

export function viewerClass(userAgent: string | undefined): ViewerClass {
  if (!userAgent?.trim()) return 'unknown';
  if (AI_AGENTS.test(userAgent)) return 'agent';
  return isbot(userAgent) ? 'crawler' : 'human';
}

export function viewerId(masterKey: Buffer, clientIp: string | undefined, userAgent: string | undefined, at: Date): string {
  return createHmac('sha256', viewerKey(masterKey, at.toISOString().slice(0, 10)))
    .update(`${clientIp ?? ''}\n${userAgent ?? ''}`)
    .digest('base64url')
    .slice(0, 22);
}

/** The day's key, derived once a day rather than once a view (half the hashing of a report). */
let dayKey: { masterKey: Buffer; day: string; key: Buffer } | undefined;

function viewerKey(masterKey: Buffer, day: string): Buffer {
  if (dayKey?.day !== day || dayKey.masterKey !== masterKey) {
    dayKey = { masterKey, day, key: createHmac('sha256', masterKey).update(`hub page-view viewer key ${day}`).digest() };
  }
  return dayKey.key;
}

/** Whether an Accept header takes markdown (`text/markdown` with a non-zero quality). */
export function acceptsMarkdown(accept: string | undefined): boolean {
  for (const part of (accept ?? '').split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (type !== 'text/markdown') continue;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}
