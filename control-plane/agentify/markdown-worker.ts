import { type PageMarkdown, pageToMarkdown } from './page-markdown.js';

/** Piscina task: one fetched page converted on a worker thread (see converter.ts). */
export default function convertPage(task: { html: string; url: string }): PageMarkdown {
  return pageToMarkdown(task.html, task.url);
}
