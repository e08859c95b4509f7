import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';

// The image cannot be built without a Docker daemon; what makes it safe and small is in these two
// files, read here as Docker reads them. That `docker run` without a rail refuses to start is hub's
// own production start-up (test/cli/payments-readiness.test.ts).

const root = join(import.meta.dirname, '..', '..');
const read = (name: string) => readFileSync(join(root, name), 'utf8');

/** A .dockerignore pattern as a regular expression: `**` any depth, `*` and `?` within one name. */
function patternRegex(pattern: string): RegExp {
  const source = pattern
    .replace(/^\/+|\/+$/g, '')
    .split(/(\*\*\/|\*\*|\*|\?)/)
    .map((part) =>
      part === '**/'
        ? '(?:.*/)?'
        : part === '**'
          ? '.*'
          : part === '*'
            ? '[^/]*'
            : part === '?'
              ? '[^/]'
              : part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}$`);
}

/** Whether Docker leaves `path` out of the build context: it, or a folder it is in, matches the last pattern that names it. */
function ignored(patterns: string[], path: string): boolean {
  const parts = path.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let out = false;
  for (const line of patterns) {
    const negated = line.startsWith('!');
    const regex = patternRegex(negated ? line.slice(1) : line);
    if (prefixes.some((prefix) => regex.test(prefix))) out = !negated;
  }
  return out;
}

const dockerignore = read('.dockerignore')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));

t.test('.dockerignore keeps master keys, local state and installed packages out of the image', async (t) => {
  const keyFile = /openssl rand -hex 32 > (\S+)/.exec(read('README.md'))?.[1];
  t.ok(keyFile, "the README's Docker section makes a key file");
  for (const path of [
    keyFile!,
    'master.key',
    'data/master.key',
    'data/hub.db',
    'data/chain.json',
    'hub.db',
    '.env',
    'node_modules/pg/package.json',
    'generated/prisma/sqlite/client.ts',
    '.git/HEAD',
  ]) {
    t.ok(ignored(dockerignore, path), `${path} is left out`);
  }
  for (const path of ['package.json', 'package-lock.json', 'bin/hub.js', 'cli/main.ts', 'prisma/models.prisma', 'contracts/HubUSD.sol']) {
    t.notOk(ignored(dockerignore, path), `${path} is in`);
  }
});

t.test('the Dockerfile builds in three stages and the image it runs has no compilers', async (t) => {
  const lines = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'));
  const stages: string[][] = [];
  for (const line of lines) {
    if (/^FROM\s/i.test(line)) stages.push([]);
    stages.at(-1)?.push(line);
  }
  t.equal(stages.length, 3, 'a build stage, the dashboard and the image');
  const [build, dashboard, image] = stages.map((stage) => stage.join('\n')) as [string, string, string];
  t.match(build, /^FROM \S+ AS build$/m);
  t.match(build, /apt-get install .*\bg\+\+/, 'the build stage has the compilers better-sqlite3 may need');
  t.match(build, /npm ci --omit=dev/, 'it installs the lockfile, without development packages');
  t.notMatch(image, /apt-get|\b(g\+\+|gcc|make|python3|build-essential)\b/, 'the image installs no build tools');
  t.match(image, /^COPY --from=build \/app\/node_modules node_modules$/m, 'the image takes the installed packages from the build');
  t.match(dashboard, /^FROM \S+ AS dashboard$/m);
  t.match(dashboard, /node scripts\/dashboard-build\.js/, 'the dashboard is built with the development packages, in a stage of its own');
  t.match(image, /^COPY --from=dashboard \/app\/dashboard\/dist dashboard\/dist$/m, 'the image takes only its files');
  t.match(image, /^ENV NODE_ENV=production/m, 'it runs in production');
  t.match(image, /^USER node$/m);
  t.match(image, /^CMD \["node", "bin\/hub.js", "start"\]$/m);
});

t.test("the README's docker run names a payment rail, which production needs", async (t) => {
  const run = /^docker run .*$/m.exec(read('README.md').replace(/\\\n/g, ' '))?.[0] ?? '';
  for (const name of ['HUB_MASTER_KEY', 'HUB_SMTP_URL', 'HUB_FACILITATOR_URL', 'HUB_PAYMENT_NETWORK', 'HUB_PAYMENT_TOKEN_ADDRESS']) {
    t.match(run, new RegExp(`-e ${name}=`), `it sets ${name}`);
  }
});
