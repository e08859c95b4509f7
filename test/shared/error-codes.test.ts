import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { errorCodes } from '../../shared/errors.js';

// Every code in the table is either raised by the product (and asserted by a test) or marked
// reserved for work not built yet, and then raised nowhere.

const root = fileURLToPath(new URL('../..', import.meta.url));
const productFolders = ['bin', 'cli', 'control-plane', 'examples', 'proxy', 'runtime', 'sdk', 'shared'];
const table = 'shared/errors.ts';
const thisFile = relative(root, fileURLToPath(import.meta.url));

function sources(folder: string): { path: string; text: string }[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|js|mjs)$/.test(entry.name))
    .map((entry) => {
      const path = relative(root, join(entry.parentPath, entry.name));
      return { path, text: readFileSync(join(root, path), 'utf8') };
    });
}

const product = productFolders.flatMap(sources).filter((file) => file.path !== table);
const tests = sources('test').filter((file) => file.path !== thisFile && file.path !== 'test/shared/errors.test.ts');
const quoted = (code: string) => new RegExp(`['"\`]${code}['"\`]`);
const mentions = (files: { path: string; text: string }[], code: string) =>
  files.filter((file) => quoted(code).test(file.text)).map((f) => f.path);

t.test('the scan sees the product and the tests', async (t) => {
  t.ok(product.some((file) => file.path === 'proxy/server.ts'));
  t.ok(tests.length > 50);
});

for (const [code, entry] of Object.entries(errorCodes)) {
  const reserved = 'reserved' in entry ? entry.reserved : undefined;
  if (reserved) {
    t.test(`${code} is reserved for ${reserved} and raised nowhere yet`, async (t) => {
      t.same(mentions(product, code), []);
    });
  } else {
    t.test(`${code} is raised by the product and asserted by a test`, async (t) => {
      t.not(mentions(product, code).length, 0, 'raised somewhere');
      t.not(mentions(tests, code).length, 0, 'asserted somewhere');
    });
  }
}
