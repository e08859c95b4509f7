import { Piscina } from 'piscina';
import { workerExecArgv, workerModule } from '../../runtime/worker-module.js';
import { ApiError } from '../../shared/errors.js';
import type { PageMarkdown } from './page-markdown.js';

/**
 * Page conversion on a small worker pool: readability and turndown take seconds on a large page,
 * which on the serving thread would stall every other request (usage checks included). A
 * conversion past its time is cut off (piscina ends the thread); a full queue is 503.
 */
export class PageConverter {
  private pool: Piscina | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly threads = 1,
  ) {}

  async convert(html: string, url: string): Promise<PageMarkdown> {
    this.pool ??= new Piscina({
      filename: workerModule(import.meta.url, 'markdown-worker').href,
      minThreads: 0,
      maxThreads: this.threads,
      maxQueue: 32 * this.threads,
      idleTimeout: 60_000,
      execArgv: workerExecArgv(),
    });
    if (this.pool.queueSize >= this.pool.options.maxQueue) {
      throw new ApiError('service_unavailable', 'Too many pages are being converted; try again shortly.');
    }
    try {
      return (await this.pool.run({ html, url }, { signal: AbortSignal.timeout(this.timeoutMs) })) as PageMarkdown;
    } catch (err) {
      if ((err as { name?: string }).name === 'AbortError') {
        throw new ApiError('page_too_large', `The page took longer than ${this.timeoutMs / 1000} s to convert.`);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.pool = undefined;
  }
}
