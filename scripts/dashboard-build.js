// Builds the dashboard (dashboard/ → dashboard/dist) with Vite, as `npm install` does after
// generating the Prisma clients, and reports its script size: the first load stays under
// 200 KB of gzipped script or the build fails (docs/decisions.md#D-233).
//
//   node scripts/dashboard-build.js [--if-missing]
//
// --if-missing builds only when dashboard/dist is absent (the browser tests' set-up). Where the
// build tools are not installed (`npm ci --omit=dev`), it says so and builds nothing.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'dashboard');
const out = join(source, 'dist');
export const SCRIPT_BUDGET_BYTES = 200 * 1024;

/** Gzipped bytes of every script the page loads (all of dist's .js: the build makes no lazy chunks). */
export function scriptSize(dir = out) {
  let gzipped = 0;
  let raw = 0;
  const walk = (at) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.js')) {
        const body = readFileSync(path);
        raw += body.length;
        gzipped += gzipSync(body, { level: 9 }).length;
      }
    }
  };
  walk(dir);
  return { raw, gzipped };
}

async function main() {
  if (process.argv.includes('--if-missing') && existsSync(join(out, 'index.html'))) return;
  let vite;
  try {
    vite = await import(createRequire(join(root, 'package.json')).resolve('vite'));
  } catch {
    console.log('dashboard: vite is not installed (a production install), so the dashboard is not built');
    return;
  }
  const started = Date.now();
  await vite.build({ configFile: join(source, 'vite.config.ts') });
  const { raw, gzipped } = scriptSize();
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log(
    `dashboard: built in ${Date.now() - started} ms; script ${kb(gzipped)} gzip (${kb(raw)} raw), budget ${kb(SCRIPT_BUDGET_BYTES)}`,
  );
  if (gzipped > SCRIPT_BUDGET_BYTES) {
    console.error(`dashboard: the script is over its budget of ${kb(SCRIPT_BUDGET_BYTES)} gzipped`);
    process.exit(1);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
