import t from 'tap';
import { CHEAP_TEST_COST, hashPassword, PRODUCTION_COST, passwordHashCost, verifyPassword } from '../../../control-plane/auth/password.js';

// The test suite hashes at the cheap cost (HUB_TEST_CHEAP_PASSWORD_HASH=1 in its environment);
// nothing else may: a real installation gets the production cost whatever it sets.

/** Runs `fn` with HUB_TEST_CHEAP_PASSWORD_HASH and HUB_ENV as given (undefined: unset), then puts them back. */
async function withEnv<T>(env: { HUB_TEST_CHEAP_PASSWORD_HASH?: string; HUB_ENV?: string }, fn: () => Promise<T>): Promise<T> {
  const keys = ['HUB_TEST_CHEAP_PASSWORD_HASH', 'HUB_ENV'] as const;
  const before = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
  for (const k of keys) {
    if (env[k] === undefined) delete process.env[k];
    else process.env[k] = env[k];
  }
  try {
    return await fn();
  } finally {
    for (const k of keys) {
      if (before[k] === undefined) delete process.env[k];
      else process.env[k] = before[k];
    }
  }
}

const costOf = (stored: string) => stored.split('$').slice(1, 4).map(Number);

t.test('by default a password is hashed at the production cost: scrypt N=2^15, r=8, p=1', async (t) => {
  t.same(PRODUCTION_COST, { N: 32768, r: 8, p: 1 });
  const stored = await withEnv({}, () => hashPassword('correct horse'));
  t.match(stored, /^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  t.ok(await verifyPassword('correct horse', stored));
  t.notOk(await verifyPassword('correct horse!', stored));
});

t.test('HUB_TEST_CHEAP_PASSWORD_HASH=1 lowers the cost outside production only', async (t) => {
  const cheap = [CHEAP_TEST_COST.N, CHEAP_TEST_COST.r, CHEAP_TEST_COST.p];
  const production = [PRODUCTION_COST.N, PRODUCTION_COST.r, PRODUCTION_COST.p];
  t.same(costOf(await withEnv({ HUB_TEST_CHEAP_PASSWORD_HASH: '1' }, () => hashPassword('pw'))), cheap, 'development: cheap');
  t.same(costOf(await withEnv({ HUB_TEST_CHEAP_PASSWORD_HASH: '1', HUB_ENV: 'test' }, () => hashPassword('pw'))), cheap, 'test: cheap');
  t.same(
    costOf(await withEnv({ HUB_TEST_CHEAP_PASSWORD_HASH: '1', HUB_ENV: 'production' }, () => hashPassword('pw'))),
    production,
    'production ignores it',
  );
  t.same(passwordHashCost({ HUB_TEST_CHEAP_PASSWORD_HASH: '1', NODE_ENV: 'production' }), PRODUCTION_COST, 'NODE_ENV=production too');
  t.same(passwordHashCost({ HUB_TEST_CHEAP_PASSWORD_HASH: 'yes' }), PRODUCTION_COST, 'only the value 1 turns it on');
});

t.test('a hash is verified at the cost it carries, whichever cost is in force', async (t) => {
  const strong = await withEnv({}, () => hashPassword('secret one'));
  const cheap = await withEnv({ HUB_TEST_CHEAP_PASSWORD_HASH: '1' }, () => hashPassword('secret two'));
  for (const env of [{}, { HUB_TEST_CHEAP_PASSWORD_HASH: '1' }]) {
    await withEnv(env, async () => {
      t.ok(await verifyPassword('secret one', strong));
      t.ok(await verifyPassword('secret two', cheap));
      t.notOk(await verifyPassword('secret two', strong));
      t.notOk(await verifyPassword('secret one', cheap));
    });
  }
});
