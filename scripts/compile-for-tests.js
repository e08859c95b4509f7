// Compiles hub's TypeScript tree to JavaScript for one test run, so the suite's processes run
// without a module loader. tsx compiles the same files with the same compiler (esbuild), but
// through a loader hook that costs every module a round trip to a loader thread (Node 20 has no
// in-thread hooks); a test file loads about 800 modules, a `hub` process as many (D-210).
//
// Each file keeps its own location as `import.meta.url`, so whatever it reads beside itself
// (migrations, contracts, fixtures, the source tree a test scans) is read where it is. The output
// sits inside the checkout, so packages resolve from its node_modules as they do for the source.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
export const compiledRoot = join(repoRoot, '.tap', 'build');
/** The compiled `hub` command: `bin/hub.js` without the loader, running the compiled CLI. */
export const compiledHubBin = join(compiledRoot, 'bin', 'hub.js');

/** Every TypeScript file of the folders the type check covers (one list, in tsconfig.json). */
async function sourceFiles() {
  const { include } = JSON.parse(await readFile(join(repoRoot, 'tsconfig.json'), 'utf8'));
  const files = [];
  const walk = async (dir) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') await walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const folder of include) await walk(join(repoRoot, folder));
  return files;
}

const ownLocation = {
  name: 'own-location',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async ({ path }) => ({
      contents: (await readFile(path, 'utf8'))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
        .replaceAll('import.meta.filename', JSON.stringify(path)),
      loader: 'ts',
    }));
  },
};

/** Compiles the tree afresh into `.tap/build` and answers how many files it compiled. */
export async function compileForTests() {
  rmSync(compiledRoot, { recursive: true, force: true });
  const entryPoints = await sourceFiles();
  await esbuild.build({
    entryPoints,
    outdir: compiledRoot,
    outbase: repoRoot,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'error',
    plugins: [ownLocation],
  });
  mkdirSync(dirname(compiledHubBin), { recursive: true });
  writeFileSync(compiledHubBin, "// bin/hub.js for a test run: the compiled CLI, without tsx's loader.\nawait import('../cli/main.js');\n");
  return entryPoints.length;
}
