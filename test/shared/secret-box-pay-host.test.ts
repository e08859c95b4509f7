import { randomBytes } from 'node:crypto';
import t from 'tap';
import { normalizeHost, slugFromPayHost } from '../../shared/pay-host.js';
import { openSecret, sealSecret } from '../../shared/secret-box.js';

t.test('sealed secrets open with the same key only', async (t) => {
  const key = randomBytes(32);
  const sealed = sealSecret(key, 'whsec-value ✓');
  t.not(sealed.includes('whsec'), true, 'ciphertext hides the value');
  t.equal(openSecret(key, sealed), 'whsec-value ✓');
  t.not(sealSecret(key, 'x'), sealSecret(key, 'x'), 'fresh IV each time');
  t.throws(() => openSecret(randomBytes(32), sealed), 'another key fails');
  const parts = sealed.split('.');
  parts[3] = Buffer.from('tampered').toString('base64url');
  t.throws(() => openSecret(key, parts.join('.')), 'tampering fails');
  t.throws(() => openSecret(key, 'garbage'));
});

t.test('pay hosts', async (t) => {
  t.equal(normalizeHost('Acme.Pay.Localhost:8402'), 'acme.pay.localhost');
  t.equal(normalizeHost('acme.pay.localhost.'), 'acme.pay.localhost');
  t.equal(normalizeHost('[::1]:8402'), '[::1]');
  t.equal(normalizeHost(''), undefined);
  t.equal(slugFromPayHost('acme.pay.localhost', 'pay.localhost'), 'acme');
  t.equal(slugFromPayHost('a.b.pay.localhost', 'pay.localhost'), undefined, 'one label only');
  t.equal(slugFromPayHost('pay.localhost', 'pay.localhost'), undefined);
  t.equal(slugFromPayHost('acme.evil.com', 'pay.localhost'), undefined);
  t.equal(slugFromPayHost('-bad.pay.localhost', 'pay.localhost'), undefined);
});
