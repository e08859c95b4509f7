import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../../shared/errors.js';
import { loadStaticFiles, type StaticFile } from './static-files.js';

export const DASHBOARD_PREFIX = '/dashboard/';
const builtDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dashboard', 'dist');

/**
 * The page's security headers (docs/decisions.md#D-235): script only from hub's own files (no
 * inline script, no eval), data only from the same origin (the `/v1` API), never framed.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
    "manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/**
 * Serves the dashboard under /dashboard/ on the control-plane, the origin of the `/v1` API it
 * reads: a path that names no built file is one of the app's own pages and gets index.html.
 */
export function createDashboardHandler(dir = builtDir) {
  let files: Map<string, StaticFile> | null | undefined;
  return function serveDashboard(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError('method_not_allowed');
    files ??= loadStaticFiles(dir);
    if (!files) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
      res.end('The dashboard is not built. Run `npm install` (or `npm run dashboard:build`) and restart hub.\n');
      return;
    }
    const below = path.slice(DASHBOARD_PREFIX.length);
    const file = files.get(below) ?? (below.startsWith('assets/') ? undefined : files.get('index.html'));
    if (!file) throw new ApiError('not_found');
    const gzip = file.gzipped && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? file.gzipped! : file.body;
    res.writeHead(200, {
      'content-type': file.type,
      'content-length': String(body.length),
      'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      vary: 'accept-encoding',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      ...SECURITY_HEADERS,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
