import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startTestControlPlane } from '../helpers/control-plane.js';
import { testProviders } from '../helpers/database.js';
import { codeBlocks, readerEnvironment, repoRoot, runShellBlock, ShellSession, sandboxCheckout } from '../helpers/doc-blocks.js';
import { managementClient } from '../helpers/management.js';
import { freePort, waitForStatus } from '../helpers/processes.js';
import { kid, secret, send } from '../helpers/signed-request.js';

// The SDK as a seller's project gets it: packed with `npm run sdk:pack`, installed from the
// tarball into a project of its own, and used from plain JavaScript, exactly as sdk/README.md
// shows (its install steps run as written, its examples are the servers this test runs: the
// metered API, then the site that reports its page views).

const blocks = codeBlocks(readFileSync(join(repoRoot, 'sdk', 'README.md'), 'utf8'));

t.test('sdk/README.md: install the packed SDK, run its example against a real control-plane', async (t) => {
  const { root, checkout } = sandboxCheckout(t);
  const project = join(root, 'my-api');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-api', version: '1.0.0', private: true, type: 'module' }));

  const install = blocks.find((b) => b.lang === 'sh');
  if (!t.ok(install, 'the README shows how to install')) return;
  const shell = new ShellSession(checkout, root, { ...readerEnvironment(), npm_config_prefer_offline: 'true' });
  t.teardown(() => shell.close());
  if (!(await runShellBlock(t, shell, install!, 'sdk/README.md'))) return;
  const installed = join(project, 'node_modules', '@hub', 'sdk');
  const files = readdirSync(join(installed, 'dist', 'sdk'));
  t.ok(files.includes('index.js') && files.includes('index.d.ts'), 'the package holds JavaScript and type declarations');
  t.notOk(
    files.some((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
    'and no TypeScript source: it runs without a TypeScript loader',
  );

  await t.test('a TypeScript project type-checks against the declarations', async (t) => {
    writeFileSync(
      join(project, 'check.ts'),
      [
        "import { createUsageClient, type HubIdentity, paymentRequiredBody, withHubSignature } from '@hub/sdk';",
        "import { AllowanceUnavailableError, allowanceUnavailableBody, createPageViewReporter, pageViewsExpress, pageViewsFastify, withPageViews } from '@hub/sdk';",
        "import { SqliteAccountStore } from '@hub/sdk/sqlite';",
        "import { createReplyKey, decryptReply, encryptRequest, fetchJwks } from '@hub/sdk/encryption';",
        "const usage = createUsageClient({ baseUrl: 'http://127.0.0.1:8400', apiKey: 'hub_x' });",
        'const handler = withHubSignature(async (_req, res, { identity }: { identity: HubIdentity }) => { res.end(identity.requestId); }, { secrets: {} });',
        "export const all = [usage, handler, paymentRequiredBody({ serviceSlug: 's', usage: [] }), SqliteAccountStore];",
        'export const agent = [createReplyKey, decryptReply, encryptRequest, fetchJwks];',
        "const pageViews = createPageViewReporter({ baseUrl: 'http://127.0.0.1:8400', apiKey: 'hub_x', seller: 'sel_0123456789abcdefghijklmn' });",
        'export const site = [withPageViews((_req, res) => { res.end(); }, pageViews), pageViewsExpress(pageViews), pageViewsFastify(pageViews)];',
        "export const outage = [new AllowanceUnavailableError('down', 0, undefined).code, allowanceUnavailableBody().error];",
        '',
      ].join('\n'),
    );
    const tsconfig = {
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(repoRoot, 'node_modules', '@types')],
      },
      files: ['check.ts'],
    };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
    } catch (err) {
      output = (err as { stdout?: string }).stdout ?? String(err);
    }
    t.equal(output, '', 'no type errors');
  });

  await t.test('the agent helpers run from the package, with jose installed beside them', async (t) => {
    const script = [
      "import { createReplyKey, decryptReply, encryptRequest } from '@hub/sdk/encryption';",
      'const seller = await createReplyKey();',
      "const jwks = { keys: [{ ...seller.publicJwk, kid: 'k', use: 'enc', alg: 'ECDH-ES' }] };",
      'const jwe = await encryptRequest(jwks, "hello", { replyKey: await createReplyKey(), contentType: "text/plain" });',
      'const { plaintext, contentType } = await decryptReply(jwe, seller);',
      'console.log(jwe.split(".").length, new TextDecoder().decode(plaintext), contentType);',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: project, encoding: 'utf8' });
    t.equal(out, '5 hello text/plain\n');
  });

  const [example, siteExample] = blocks.filter((b) => b.lang === 'js');

  await t.test('the README example, as written, verifies hub and asks the control-plane', async (t) => {
    if (!t.ok(example, 'the README shows an example')) return;
    writeFileSync(join(project, 'server.mjs'), example!.code);

    const cp = await startTestControlPlane(t, testProviders()[0]!);
    const { apiKey } = await cp.bootstrap();
    const port = await freePort();
    const server = spawn(process.execPath, ['server.mjs'], {
      cwd: project,
      env: { ...readerEnvironment(), HUB_KID: kid, HUB_SECRET: secret, HUB_URL: cp.url, HUB_API_KEY: apiKey, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let errors = '';
    server.stderr!.on('data', (d) => (errors += d));
    t.teardown(() => server.kill('SIGKILL'));
    t.ok(await waitForStatus(`http://127.0.0.1:${port}/`, 401), 'it listens, and refuses what hub did not sign');

    const unsigned = await fetch(`http://127.0.0.1:${port}/forecast`);
    t.equal(unsigned.status, 401);
    t.same(await unsigned.json(), { error: 'invalid_zeroclick_signature' });

    const signed = await send(port, { path: '/forecast?city=paris' });
    t.equal(signed.status, 402, 'a signed request no payment stands behind is told to pay');
    t.same(signed.json, { error: 'payment_required', serviceSlug: 'forecast', usage: [{ meterSlug: 'calls', quantity: 1 }] });
    t.equal(errors, '', 'nothing on stderr');
  });

  await t.test('the page-view example, as written, reports what it serves to the control-plane', async (t) => {
    if (!t.ok(siteExample, 'the README shows how to report page views')) return;
    writeFileSync(join(project, 'site.mjs'), siteExample!.code);

    const cp = await startTestControlPlane(t, testProviders()[0]!);
    const { apiKey } = await cp.bootstrap();
    const created = await managementClient(cp.url).post('/v1/sellers', apiKey, {
      name: 'Weather',
      slug: 'weather-site',
      upstreamBaseUrl: 'http://127.0.0.1:9',
    });
    const port = await freePort();
    const site = spawn(process.execPath, ['site.mjs'], {
      cwd: project,
      env: { ...readerEnvironment(), HUB_URL: cp.url, HUB_API_KEY: apiKey, HUB_SELLER_ID: created.body.seller.id, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let errors = '';
    site.stderr!.on('data', (d) => (errors += d));
    t.teardown(() => site.kill('SIGKILL'));
    t.ok(await waitForStatus(`http://127.0.0.1:${port}/`, 200), 'it serves its page');
    const page = await fetch(`http://127.0.0.1:${port}/forecast?city=paris`, { headers: { 'user-agent': 'Claude-User/1.0' } });
    t.equal(page.status, 200);
    t.match(await page.text(), /<h1>Forecasts/);

    const exited = new Promise((resolve) => site.once('exit', resolve));
    site.kill('SIGTERM');
    t.equal(await exited, 0, 'it stops cleanly, its views sent');
    await cp.pageViews.sink.drain();
    const views = await cp.db.pageView.findMany({ where: { sellerId: created.body.seller.id }, orderBy: { createdAt: 'asc' } });
    t.same(
      views.map((v) => v.path),
      ['/', '/forecast'],
      "the readiness probe's page, then the agent's, without the query",
    );
    t.equal(views[1]!.viewerClass, 'agent', "the visitor's user agent, not the reporter's");
    t.equal(errors, '', 'nothing on stderr');
  });
});
