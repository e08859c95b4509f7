import { createServer, type IncomingHttpHeaders, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { closeServer } from '../../runtime/http-server.js';
import { type PageViewReporter, pageViewsExpress, pageViewsFastify, withPageViews } from '../../sdk/index.js';
import { startTestControlPlane, type TestControlPlane } from './control-plane.js';
import { testProviders } from './database.js';
import { managementClient } from './management.js';

type Tap = { teardown: (fn: () => unknown) => void };

/** A real control-plane with a seller and a key that may report its page views; the views hub stored, read back. */
export async function pageViewHub(t: Tap, env: Record<string, string> = {}) {
  const cp = await startTestControlPlane(t, testProviders()[0]!, env);
  const boot = await cp.bootstrap();
  const api = managementClient(cp.url);
  const created = await api.post('/v1/sellers', boot.apiKey, {
    name: 'Docs',
    slug: `docs-${boot.organizationId.slice(-6).toLowerCase()}`,
    upstreamBaseUrl: 'http://127.0.0.1:9',
  });
  if (created.status !== 201) throw new Error(`creating the seller failed: ${created.status} ${JSON.stringify(created.body)}`);
  const sellerId: string = created.body.seller.id;
  return {
    cp,
    apiKey: boot.apiKey,
    sellerId,
    /** Every view stored for the seller, oldest first, once hub's write buffer has been written. */
    async views() {
      await cp.pageViews.sink.drain();
      return cp.db.pageView.findMany({ where: { sellerId }, orderBy: [{ createdAt: 'asc' }, { path: 'asc' }] });
    },
  };
}

export type PageViewHub = Awaited<ReturnType<typeof pageViewHub>> & { cp: TestControlPlane };

/**
 * A seller's site with the same pages in each framework, under `/{framework}`: an HTML page (its
 * query and fragment are not part of its path), an HTML 404, a Markdown page, a script, a JSON API,
 * a redirect, and (in the frameworks) a page that answers POST too.
 */
export type SiteFramework = 'node' | 'express' | 'fastify';
export const FRAMEWORKS: SiteFramework[] = ['node', 'express', 'fastify'];

const HTML = '<!doctype html><title>Docs</title><h1>Docs</h1>';
const MARKDOWN = '# Docs\n';

export async function startSite(t: Tap, framework: SiteFramework, reporter: PageViewReporter): Promise<{ port: number }> {
  const prefix = `/${framework}`;
  if (framework === 'node') {
    // Plain node:http code, headers passed straight to writeHead (not kept for getHeader).
    const page = (res: ServerResponse, status: number, type: string, body: string) => {
      res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    const server = createServer(
      withPageViews((req, res) => {
        const path = (req.url ?? '/').split('?', 1)[0];
        if (path === `${prefix}/docs`) return page(res, 200, 'text/html; charset=utf-8', HTML);
        if (path === `${prefix}/guide.md`) return page(res, 200, 'text/markdown; charset=utf-8', MARKDOWN);
        if (path === `${prefix}/app.js`) return page(res, 200, 'text/javascript', 'void 0;');
        if (path === `${prefix}/api/data`) return page(res, 200, 'application/json', '{"a":1}');
        if (path === `${prefix}/old`) {
          res.writeHead(301, { location: `${prefix}/docs`, 'content-type': 'text/html' });
          return res.end('<a href="/docs">moved</a>');
        }
        page(res, 404, 'text/html', '<h1>Not found</h1>');
      }, reporter),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => closeServer(server, 100));
    return { port: (server.address() as AddressInfo).port };
  }
  if (framework === 'express') {
    const app = express();
    app.use(pageViewsExpress(reporter));
    // A router strips its mount path from req.url: the view keeps the path the visitor asked for.
    const router = express.Router();
    router.get('/docs', (_req, res) => void res.type('html').send(HTML));
    router.post('/docs', (_req, res) => void res.type('html').send(HTML));
    router.get('/guide.md', (_req, res) => void res.type('text/markdown').send(MARKDOWN));
    router.get('/app.js', (_req, res) => void res.type('text/javascript').send('void 0;'));
    router.get('/api/data', (_req, res) => void res.json({ a: 1 }));
    router.get('/old', (_req, res) => res.redirect(301, `${prefix}/docs`));
    router.use((_req, res) => void res.status(404).type('html').send('<h1>Not found</h1>'));
    app.use(prefix, router);
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    t.teardown(() => closeServer(server, 100));
    return { port: (server.address() as AddressInfo).port };
  }
  const app = Fastify();
  app.addHook('onRequest', pageViewsFastify(reporter));
  app.get(`${prefix}/docs`, async (_req, reply) => reply.type('text/html; charset=utf-8').send(HTML));
  app.post(`${prefix}/docs`, async (_req, reply) => reply.type('text/html; charset=utf-8').send(HTML));
  app.get(`${prefix}/guide.md`, async (_req, reply) => reply.type('text/markdown').send(MARKDOWN));
  app.get(`${prefix}/app.js`, async (_req, reply) => reply.type('text/javascript').send('void 0;'));
  app.get(`${prefix}/api/data`, async () => ({ a: 1 }));
  app.get(`${prefix}/old`, async (_req, reply) => reply.redirect(`${prefix}/docs`, 301));
  app.setNotFoundHandler(async (_req, reply) => reply.code(404).type('text/html').send('<h1>Not found</h1>'));
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  return { port: (app.server.address() as AddressInfo).port };
}

export type Visit = { status: number; headers: IncomingHttpHeaders; body: string };

/**
 * One visitor's request, with exactly the headers given (node:http sends Referer and the like as
 * written, where fetch would not), and the whole answer.
 */
export function visit(port: number, path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Visit> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
