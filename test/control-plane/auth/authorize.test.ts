import t from 'tap';
import { authorizeApiKey, authorizeSession } from '../../../control-plane/auth/authorize.js';
import type { ApiKeyCredential, SessionCredential } from '../../../control-plane/auth/credentials.js';
import { lastUsedIsStale } from '../../../control-plane/auth/credentials.js';
import { bearerToken } from '../../../shared/bearer.js';
import { ApiError } from '../../../shared/errors.js';

// The key-only route groups (spec: Route groups › Usage, Agentify) have no routes in this issue
// yet; their check is exercised here so the usage and agentify routes can rely on it.
const key: ApiKeyCredential = { kind: 'apiKey', id: 'ak_x', organizationId: 'org_x', scopes: ['usage:read'] };
const session: SessionCredential = { kind: 'session', id: 'ses_x', userId: 'usr_x', currentOrganizationId: 'org_x' };

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof ApiError ? err.code : String(err);
  }
};

t.test('key-only groups', async (t) => {
  t.same(authorizeApiKey(key, 'usage:read'), { organizationId: 'org_x', credential: key });
  t.equal(
    codeOf(() => authorizeApiKey(key, 'usage:write')),
    'insufficient_scope',
  );
  t.equal(
    codeOf(() => authorizeApiKey(session, 'usage:read')),
    'auth_type_not_allowed',
  );
});

t.test('session-only groups', async (t) => {
  t.equal(authorizeSession(session), session);
  t.equal(
    codeOf(() => authorizeSession(key)),
    'auth_type_not_allowed',
  );
});

t.test('bearer header parsing', async (t) => {
  t.equal(bearerToken('Bearer hub_abc'), 'hub_abc');
  t.equal(bearerToken('bearer   hub_abc '), 'hub_abc');
  t.equal(bearerToken('Bearer'), undefined);
  t.equal(bearerToken('Bearer a b'), undefined);
  t.equal(bearerToken('Token hub_abc'), undefined);
  t.equal(bearerToken(undefined), undefined);
});

t.test('lastUsedAt resolution', async (t) => {
  const now = new Date('2025-01-01T00:01:00Z');
  t.ok(lastUsedIsStale(null, now));
  t.notOk(lastUsedIsStale(new Date('2025-01-01T00:00:01Z'), now));
  t.ok(lastUsedIsStale(new Date('2025-01-01T00:00:00Z'), now));
});
