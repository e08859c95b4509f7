import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * The dashboard's built files (dashboard/dist, written by `npm install`'s build step), read once
 * into memory with a gzip copy of each: a few hundred kilobytes that never change while hub runs.
 */
export type StaticFile = { body: Buffer; gzipped: Buffer | undefined; type: string; immutable: boolean };

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/** The files under `root` by their path below it (`index.html`, `assets/index-3f2a.js`); null when it was not built. */
export function loadStaticFiles(root: string): Map<string, StaticFile> | null {
  if (!existsSync(join(root, 'index.html'))) return null;
  const files = new Map<string, StaticFile>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(root, path).split(sep).join('/'), fileAt(path, relative(root, path)));
    }
  };
  walk(root);
  return files;
}

function fileAt(path: string, below: string): StaticFile {
  const ext = extname(path);
  const body = readFileSync(path);
  return {
    body,
    gzipped: COMPRESSIBLE.has(ext) ? gzipSync(body) : undefined,
    type: TYPES[ext] ?? 'application/octet-stream',
    // Vite names what it bundles by content hash under assets/: such a file never changes.
    immutable: below.startsWith(`assets${sep}`),
  };
}
