import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import t, { type Test } from 'tap';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hashPassword } from '../../control-plane/auth/password.js';
import { claimVouchers } from '../../control-plane/sessions/claim-vouchers.js';
import { newId } from '../../shared/ids.js';
import { browserMissing, ensureDashboardBuilt, launchBrowser, seriousViolations } from '../helpers/browser.js';
import { chainReader } from '../helpers/chain.js';
import { startPaidWorld } from '../helpers/paid-world.js';
import { x402Fetch } from '../helpers/x402-agent.js';

// The dashboard in a real browser (Debian's Chromium driven by Playwright) against a real hub
// with a local chain: sign in with the session cookie, build a catalog through the forms (the
// API's own validation messages beside the fields), create and revoke an API key, see a paid call
// in analytics, re-send a failed account write, and no serious accessibility violations on the
// way. HUB_DASHBOARD_SCREENSHOTS=<folder> also saves the main pages as pictures (docs/).

const missing = browserMissing();
if (missing) {
  console.error(`\n${missing}\n`);
  t.pass(`skipped: ${missing}`, { skip: missing });
} else {
  ensureDashboardBuilt();
  const shots = process.env.HUB_DASHBOARD_SCREENSHOTS;
  const world = await startPaidWorld(t, 'sqlite');
  const { hub, db } = world;
  const base = hub.cp.url;
  const email = 'seller@example.com';
  const password = 'correct horse battery';
  const admin = await db.membership.findFirstOrThrow({ where: { organizationId: hub.organizationId } });
  await db.user.update({ where: { id: admin.userId }, data: { email, passwordHash: await hashPassword(password) } });
  await db.organization.update({ where: { id: hub.organizationId }, data: { name: 'Weather Inc' } });

  const browser = await launchBrowser(t);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // Refusals the page expects (401 before sign-in, 4xx of a form) are logged by Chromium as failed loads.
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && pageErrors.push(m.text()));
  const snap = async (name: string) => {
    if (shots) await page.screenshot({ path: join(shots, `dashboard-${name}.png`), fullPage: true });
  };
  const accessible = async (t: Test, what: string) =>
    t.same(await seriousViolations(page), [], `${what}: no serious or critical axe violations`);

  await t.test('sign in: the session lives in an HttpOnly cookie, and a cookie-signed write needs the CSRF header', async (t) => {
    const response = await page.goto(`${base}/`);
    t.match(response?.headers()['content-security-policy'], /script-src 'self'/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Email or password is wrong.').waitFor();
    await accessible(t, 'sign-in page');
    await snap('sign-in');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Analytics · acme' }).waitFor();
    const cookies = await context.cookies();
    t.match(
      cookies.find((c) => c.name === '__Host-hub_session'),
      { httpOnly: true, secure: true, sameSite: 'Strict' },
    );
    const forged = await page.evaluate(async () => {
      const reply = await fetch('/v1/api-keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name":"x","scopes":["admin:read"]}',
      });
      return { status: reply.status, body: await reply.json() };
    });
    t.match(forged, { status: 403, body: { error: 'csrf_check_failed' } }, 'a write without the CSRF header is refused');
  });

  await t.test('a paid call appears in analytics', async (t) => {
    const paid = await x402Fetch(world.payerKey)(world.url('/search?q=snow'));
    t.equal(paid.status, 200);
    await page.reload();
    const totals = page.getByTestId('totals');
    await totals.getByText('$0.01').waitFor();
    t.match(await totals.textContent(), /Calls1/);
    t.equal(await page.getByTestId('transactions').locator('tbody tr').count(), 1, 'the payment in recent transactions');
    await page.locator('.chart canvas').first().waitFor();
    await accessible(t, 'analytics');
    await snap('analytics');
  });

  await t.test('a call paid from a session’s channel shows in the sessions’ split, then claimed', async (t) => {
    const offered = await world.api.patch(`/v1/sellers/${world.sellerId}`, hub.apiKey, { x402Schemes: ['exact', 'batch-settlement'] });
    t.equal(offered.status, 200);
    const client = new x402Client();
    client.register(
      world.chain.network,
      new BatchSettlementEvmScheme(toClientEvmSigner(privateKeyToAccount(world.payerKey), chainReader(world.chain)), {
        salt: `0x${randomBytes(32).toString('hex')}` as Hex,
      }),
    );
    client.setSpendControls({ allowedAssets: true });
    const paid = await wrapFetchWithPayment(fetch, client)(world.url('/search?q=hail'));
    t.equal(paid.status, 200);
    t.match(JSON.parse(Buffer.from(paid.headers.get('payment-response') ?? '', 'base64').toString()), {
      extra: { chargedAmount: '10000' },
    });
    await page.reload();
    const split = page.getByTestId('session-revenue');
    await split.waitFor();
    t.match(await split.textContent(), /Charged\$0\.01.*Not claimed yet\$0\.01.*Claimed\$0\.00.*In your wallet\$0\.00/);
    await claimVouchers(db, world.rail);
    await page.reload();
    await split.filter({ hasText: /Not claimed yet\s*\$0\.00/ }).waitFor();
    t.match(await split.textContent(), /Not claimed yet\$0\.00.*Claimed\$0\.01/, 'claimed on chain');
    await accessible(t, 'analytics with sessions');
  });

  await t.test('catalog: a seller and a payg price, with the API’s messages beside the fields', async (t) => {
    await page.getByRole('link', { name: 'Catalog' }).click();
    await page.getByText('Create a seller').click();
    const form = page.locator('form', { has: page.getByRole('button', { name: 'Create seller' }) });
    await form.getByLabel('Name', { exact: true }).fill('Weather');
    await form.getByLabel('Slug', { exact: true }).fill('Weather!');
    await form.getByLabel('Upstream base URL').fill('http://127.0.0.1:9/');
    await form.getByRole('button', { name: 'Create seller' }).click();
    const slugError = form.locator('.field-error');
    await slugError.waitFor();
    t.match(await slugError.textContent(), /lowercase/, 'the slug’s own message, beside it');
    t.equal(await form.getByLabel('Slug', { exact: true }).getAttribute('aria-invalid'), 'true');
    await form.getByLabel('Slug', { exact: true }).fill('weather');
    await form.getByRole('button', { name: 'Create seller' }).click();
    await page.getByRole('heading', { name: 'Weather', exact: true }).waitFor();
    t.match(await page.getByTestId('pay-host').textContent(), /^weather\./);

    await page.getByLabel('Service name').fill('Forecast');
    await page.getByLabel('Service slug').fill('forecast');
    await page.getByRole('button', { name: 'Add service' }).click();
    await page.getByLabel('Meter key').fill('calls');
    await page.getByLabel('Unit', { exact: true }).fill('call');
    await page.getByRole('button', { name: 'Add meter' }).click();
    await page.getByText('per call').waitFor();
    await page.getByLabel('Plan name').fill('Pay per call');
    await page.getByLabel('Plan slug').fill('payg');
    await page.getByRole('button', { name: 'Add plan' }).click();
    await page.getByLabel('Price (USD)').fill('0.001');
    await page.getByRole('button', { name: 'Add price' }).click();
    const priceError = page.getByText('A pay-as-you-go price must be a whole number of cents.');
    await priceError.waitFor();
    t.equal(await page.getByLabel('Price (USD)').getAttribute('aria-invalid'), 'true', 'beside the price');
    await page.getByLabel('Price (USD)').fill('0.01');
    await page.getByRole('button', { name: 'Add price' }).click();
    await page.getByTestId('price').getByText('calls: $0.01 per call').waitFor();
    t.pass('seller, service, meter, payg plan and price made through the forms');
    await accessible(t, 'catalog');
    await snap('catalog');
  });

  await t.test('Settings › API keys: created with scopes (shown once), then revoked', async (t) => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('CI deploys');
    await page.getByLabel('admin:read').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('shown-once').textContent()) ?? '';
    t.match(key, /^hub_/);
    const read = () => fetch(`${base}/v1/sellers`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
    t.equal(await read(), 200, 'the key works');
    await accessible(t, 'API keys');
    await snap('api-keys');
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Revoke CI deploys' }).click();
    await page.getByRole('button', { name: 'Revoke CI deploys' }).waitFor({ state: 'detached' });
    t.equal(await read(), 401, 'and is refused once revoked');
  });

  await t.test('customers: a failed account write is re-sent', async (t) => {
    const agent = await hub.agent();
    const accessId = newId('access');
    await db.access.create({
      data: { id: accessId, sellerId: world.sellerId, planId: world.ids.plan, agentId: agent.agentId, status: 'active' },
    });
    const writeId = newId('accountWrite');
    await db.accountWrite.create({
      data: {
        id: writeId,
        accessId,
        kind: 'write',
        stateVersion: 1,
        bodyJson: '{}',
        status: 'failed',
        attempts: 6,
        lastError: 'answered 500',
      },
    });
    await page.getByLabel('Seller').selectOption({ label: 'acme' });
    await page.getByRole('link', { name: 'Customers' }).click();
    await page.getByText('answered 500').waitFor();
    await accessible(t, 'customers');
    await snap('customers');
    await page.getByRole('button', { name: `Re-send write 1 of ${accessId}` }).click();
    await page.getByTestId('deliveries').getByText('pending').waitFor();
    t.match(await db.accountWrite.findUniqueOrThrow({ where: { id: writeId } }), { status: 'pending', attempts: 0 });
  });

  await t.test('what agents see: the pay URL, its 402 tried live, and its discovery documents', async (t) => {
    // The control-plane asks its own proxy on loopback; the test world's proxy is on a port of its own.
    hub.cp.config.proxy.port = Number(new URL(hub.proxyUrl).port);
    await page.getByRole('link', { name: 'What agents see' }).click();
    t.match(await page.getByTestId('pay-url').textContent(), /^http:\/\/acme\.pay\.localhost:\d+$/);
    await page.getByRole('link', { name: 'llms.txt' }).waitFor();
    await page.getByLabel('Path on the pay URL').fill('/search');
    await page.getByRole('button', { name: 'Call it as an agent' }).click();
    await page.getByTestId('try-answer').waitFor();
    t.equal(await page.getByTestId('try-status').textContent(), '402', 'the 402 an agent gets');
    t.match(await page.getByTestId('try-answer').textContent(), /"accepts"/, 'with the x402 challenge decoded');
    await accessible(t, 'what agents see');
    await snap('agents');
  });

  await t.test('a narrow screen, and sign-out', async (t) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.getByTestId('totals').waitFor();
    // Run in the page, where `document` is (written as text: the tests' types know no DOM).
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    t.equal(overflow, 0, 'nothing wider than the screen');
    await snap('narrow');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    t.notOk(
      (await context.cookies()).some((c) => c.name === '__Host-hub_session'),
      'the session cookie is gone',
    );
    t.same(pageErrors, [], 'no script errors on the way');
  });
}
