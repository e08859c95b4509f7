import type { MessagePort } from 'node:worker_threads';
import { type PageMarkdown, pageToMarkdown } from './page-markdown.js';

/** One fetched page; `started` hears when the thread takes it up, which starts its time limit. */
export type ConvertTask = { html: string; url: string; started: MessagePort };

/** Piscina task: one fetched page converted on a worker thread (see converter.ts). */
export default function convertPage({ html, url, started }: ConvertTask): PageMarkdown {
  started.postMessage(null);
  started.close();
  return pageToMarkdown(html, url);
}
