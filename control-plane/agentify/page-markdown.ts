import { gfm } from '@joplin/turndown-plugin-gfm';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

/**
 * An HTML page turned into markdown for agents: its main content found the way Firefox's reader
 * view finds it (Readability over a linkedom DOM), links and images made absolute against the
 * page's URL, then converted by turndown with GitHub-flavoured tables, strikethrough and task
 * lists. When no main content stands out (a short page, a bare list), the whole body is converted.
 *
 * CPU-bound and, for a large page, seconds long: the control-plane runs it on a worker thread
 * (markdown-worker.ts), never on the thread that serves requests.
 */
export type PageMarkdown = {
  title: string | null;
  byline: string | null;
  excerpt: string | null;
  lang: string | null;
  markdown: string;
};

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
turndown.use(gfm);
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'form', 'button', 'select', 'input', 'textarea']);

export function pageToMarkdown(html: string, pageUrl: string): PageMarkdown {
  const document = (parseHTML(html) as unknown as { document: Dom }).document;
  const title = clean(document.title);
  const lang = clean(document.documentElement?.getAttribute('lang'));
  absolutizeLinks(document, baseUrl(document, pageUrl));
  const fallback = document.body?.innerHTML || html;
  const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
  const content = article?.content?.trim() ? article.content : fallback;
  const pageTitle = clean(article?.title) ?? title;
  const body = turndown
    .turndown(content)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return {
    title: pageTitle,
    byline: clean(article?.byline),
    excerpt: clean(article?.excerpt),
    lang: clean(article?.lang) ?? lang,
    // Readability drops a heading that repeats the title; the markdown keeps one, as a document should.
    markdown: pageTitle && !body.startsWith('# ') ? `# ${turndown.escape(pageTitle)}\n\n${body}` : body,
  };
}

/** What is used of linkedom's document (its types lean on the DOM library, which hub does not load). */
type Dom = {
  title: string;
  documentElement: DomElement | null;
  body: { innerHTML: string } | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
};
type DomElement = {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
};

/** The page's `<base href>` when it names an http(s) URL, else the page's own URL. */
function baseUrl(document: Dom, pageUrl: string): URL {
  const declared = document.querySelector('base[href]')?.getAttribute('href');
  if (declared) {
    try {
      const base = new URL(declared, pageUrl);
      if (base.protocol === 'http:' || base.protocol === 'https:') return base;
    } catch {}
  }
  return new URL(pageUrl);
}

/** Links and images absolute, so the markdown stands on its own; script links are dropped. */
function absolutizeLinks(document: Dom, base: URL): void {
  for (const [selector, attribute] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const) {
    for (const element of document.querySelectorAll(selector)) {
      const value = element.getAttribute(attribute) ?? '';
      if (value.startsWith('#')) continue;
      let absolute: URL | undefined;
      try {
        absolute = new URL(value, base);
      } catch {}
      if (absolute && ['http:', 'https:', 'mailto:'].includes(absolute.protocol)) element.setAttribute(attribute, absolute.href);
      else element.removeAttribute(attribute);
    }
  }
}

function clean(value: string | null | undefined): string | null {
  const trimmed = value?.replace(/\s+/g, ' ').trim();
  return trimmed ? trimmed : null;
}
