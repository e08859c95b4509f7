import t from 'tap';
import { Agent, request } from 'undici';
import { PASSWORD_FAILURE_LIMIT, PASSWORD_FAILURE_WINDOW_MS } from '../../../control-plane/auth/password-attempts.js';
import { bootstrap } from '../../../control-plane/bootstrap.js';
import { startReplica, startTestControlPlane } from '../../helpers/control-plane.js';
import { testProviders } from '../../helpers/database.js';

const PASSWORD = 'correct horse battery';

type Answer = { status: number; body: any; retryAfter: string | undefined };

/** Signs in to `baseUrl` from the loopback address `from` (the control-plane sees it as the peer). */
function signInFrom(t: { teardown: (fn: () => unknown) => void }, from: string) {
  const agent = new Agent({ localAddress: from });
  t.teardown(() => agent.close());
  return async (baseUrl: string, email: string, password: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await request(`${baseUrl}/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ email, password }),
      dispatcher: agent,
    });
    const retryAfter = res.headers['retry-after'];
    return { status: res.statusCode, body: await res.body.json(), retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined };
  };
}

const times = (n: number) => Array.from({ length: n }, (_, i) => i);

for (const provider of testProviders()) {
  t.test(provider, async (t) => {
    const cp = await startTestControlPlane(t, provider);
    let n = 0;
    /** A user of their own with PASSWORD, so no case here counts another's failures. */
    const user = async () =>
      (await bootstrap(cp.db, { email: `user${++n}@example.com`, organizationName: 'Acme', password: PASSWORD, another: true })).email;
    const limited = { status: 429, body: { error: 'rate_limited' } };

    t.test('ten wrong passwords, then the right one is 429 with retryAfterSeconds', async (t) => {
      const email = await user();
      const signIn = signInFrom(t, '127.0.0.2');
      for (const _ of times(PASSWORD_FAILURE_LIMIT)) {
        t.match(await signIn(cp.url, email, 'wrong password'), { status: 401, body: { error: 'invalid_credentials' } });
      }
      const refused = await signIn(cp.url, email, PASSWORD);
      t.match(refused, limited, 'the right password included');
      const seconds = refused.body.retryAfterSeconds;
      t.ok(Number.isInteger(seconds) && seconds > PASSWORD_FAILURE_WINDOW_MS / 1000 - 60 && seconds <= PASSWORD_FAILURE_WINDOW_MS / 1000);
      t.equal(refused.retryAfter, String(seconds), 'and in Retry-After');
      t.notOk(refused.body.sessionToken);

      t.match(await signInFrom(t, '127.0.0.3')(cp.url, email, PASSWORD), limited, 'from another address too: the account is limited');
      t.equal((await signIn(cp.url, await user(), PASSWORD)).status, 429, 'and this address, for any account');

      // Fifteen minutes on (the attempts' times moved back, as waiting would leave them):
      await cp.db.passwordAttempt.updateMany({ data: { createdAt: new Date(Date.now() - PASSWORD_FAILURE_WINDOW_MS - 1000) } });
      t.equal((await signIn(cp.url, email, PASSWORD)).status, 200, 'the window allows again');
    });

    t.test('per address: wrong passwords on many accounts add up', async (t) => {
      const signIn = signInFrom(t, '127.0.0.4');
      for (const i of times(PASSWORD_FAILURE_LIMIT)) {
        t.equal((await signIn(cp.url, `nobody${i}@example.com`, 'wrong password')).status, 401);
      }
      const email = await user();
      t.match(await signIn(cp.url, email, PASSWORD), limited);
      t.equal((await signInFrom(t, '127.0.0.5')(cp.url, email, PASSWORD)).status, 200, 'the account itself is not limited');
    });

    t.test('a success in between does not clear the failures before it', async (t) => {
      const victim = await user();
      const attacker = await user();
      const signIn = signInFrom(t, '127.0.0.6');
      for (const _ of times(PASSWORD_FAILURE_LIMIT - 1)) t.equal((await signIn(cp.url, victim, 'guess')).status, 401);
      t.equal((await signIn(cp.url, attacker, PASSWORD)).status, 200, 'the attacker signs in to their own account');
      t.equal((await signIn(cp.url, victim, 'guess')).status, 401, 'the tenth failure');
      t.match(await signIn(cp.url, victim, PASSWORD), limited);
      t.match(await signIn(cp.url, attacker, PASSWORD), limited, 'the address is limited for every account');
    });

    t.test('guesses sent at once count each other', async (t) => {
      const email = await user();
      const signIn = signInFrom(t, '127.0.0.7');
      const answers = await Promise.all(times(PASSWORD_FAILURE_LIMIT + 5).map(() => signIn(cp.url, email, 'wrong password')));
      const statuses = answers.map((a) => a.status).sort();
      t.same(statuses, [...times(PASSWORD_FAILURE_LIMIT).map(() => 401), ...times(5).map(() => 429)]);
    });

    t.test('two control-planes on one database share the count', async (t) => {
      const replica = await startReplica(t, cp);
      const email = await user();
      const signIn = signInFrom(t, '127.0.0.8');
      for (const i of times(PASSWORD_FAILURE_LIMIT)) {
        t.equal((await signIn(i % 2 ? replica.url : cp.url, email, 'wrong password')).status, 401);
      }
      t.match(await signIn(cp.url, email, PASSWORD), limited);
      t.match(await signIn(replica.url, email, PASSWORD), limited);
    });

    t.test('X-Forwarded-For counts only behind a trusted proxy', async (t) => {
      const signIn = signInFrom(t, '127.0.0.9');
      for (const i of times(PASSWORD_FAILURE_LIMIT)) {
        await signIn(cp.url, `spoofer${i}@example.com`, 'wrong password', { 'x-forwarded-for': `198.51.100.${i}` });
      }
      t.match(await signIn(cp.url, await user(), PASSWORD, { 'x-forwarded-for': '198.51.100.200' }), limited, 'a header anyone can write');

      const behindProxy = await startTestControlPlane(t, provider, { HUB_TRUST_PROXY: 'on' });
      const email = (await bootstrap(behindProxy.db, { email: 'proxied@example.com', organizationName: 'P', password: PASSWORD })).email;
      for (const i of times(PASSWORD_FAILURE_LIMIT)) {
        await signIn(behindProxy.url, `client${i}@example.com`, 'wrong password', { 'x-forwarded-for': '203.0.113.7, 198.51.100.1' });
      }
      t.match(
        await signIn(behindProxy.url, email, PASSWORD, { 'x-forwarded-for': '203.0.113.8, 198.51.100.1' }),
        limited,
        'the address the proxy appended counts, not what the client wrote before it',
      );
      t.equal((await signIn(behindProxy.url, email, PASSWORD, { 'x-forwarded-for': '198.51.100.2' })).status, 200, 'another client');
    });
  });
}
