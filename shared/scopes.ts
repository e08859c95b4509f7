/** API key scopes (spec: Authentication › Scopes). */
export const SCOPES = ['admin:read', 'admin:write', 'usage:read', 'usage:write', 'page-views:write', 'agentify:convert'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}
