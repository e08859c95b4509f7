// Packs the seller SDK as an npm package: sdk/ and the shared modules it uses, compiled to
// JavaScript with type declarations, beside sdk/package.json and sdk/README.md. A seller's
// project installs the tarball (`npm install ./hub-sdk-0.1.0.tgz`) and needs no TypeScript.
//   node scripts/sdk-pack.js [destination folder]    (default: the current folder)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const destination = resolve(process.argv[2] ?? '.');
const stage = mkdtempSync(join(tmpdir(), 'hub-sdk-'));
try {
  for (const file of ['package.json', 'README.md']) copyFileSync(join(root, 'sdk', file), join(stage, file));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'sdk', 'tsconfig.build.json'), '--outDir', join(stage, 'dist')], {
    stdio: 'inherit',
  });
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: stage, encoding: 'utf8' });
  process.stdout.write(`${join(destination, packed.trim().split('\n').at(-1))}\n`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
