import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { workerExecArgv, workerModule } from '../../runtime/worker-module.js';
import { ApiError } from '../../shared/errors.js';
import { FairShare, type FairShareLimits } from './fair-share.js';
import type { ConvertTask } from './markdown-worker.js';
import type { PageMarkdown } from './page-markdown.js';

/**
 * Page conversion on a small worker pool: readability and turndown take seconds on a large page,
 * which on the serving thread would stall every other request (usage checks included).
 *
 * The threads are shared fairly between organizations (fair-share.ts): one organization converts
 * one page at a time, so its heavy pages leave the other thread to everyone else, and waiting
 * organizations take turns. A page is handed to the pool only when a thread is free for it, and
 * its time limit starts when the thread starts converting it (the worker says so), not while it
 * waits its turn or a fresh thread loads; past the limit the conversion is cut off (piscina ends
 * the thread) and answered 422 `page_too_large`. Lines full is 503.
 */
export type ConverterOptions = Partial<FairShareLimits> & { timeoutMs: number };

export const DEFAULT_CONVERT_SHARE: FairShareLimits = { slots: 2, perKey: 1, waitingPerKey: 8, waitingInAll: 32 };

export class PageConverter {
  private pool: Piscina | undefined;
  private readonly share: FairShare;
  private readonly timeoutMs: number;

  constructor({ timeoutMs, ...limits }: ConverterOptions) {
    this.timeoutMs = timeoutMs;
    this.share = new FairShare({ ...DEFAULT_CONVERT_SHARE, ...limits });
  }

  /** `html` converted for `organizationId`, in that organization's turn. */
  async convert(organizationId: string, html: string, url: string): Promise<PageMarkdown> {
    const full = this.share.refusal(organizationId);
    if (full) {
      throw new ApiError(
        'service_unavailable',
        full === 'key'
          ? `This organization has ${this.share.limits.waitingPerKey} pages waiting to be converted; try again shortly.`
          : 'Too many pages are being converted; try again shortly.',
      );
    }
    return this.share.run(organizationId, () => this.onThread({ html, url }));
  }

  private async onThread(page: Omit<ConvertTask, 'started'>): Promise<PageMarkdown> {
    this.pool ??= new Piscina({
      filename: workerModule(import.meta.url, 'markdown-worker').href,
      // Started with the first page and kept, so no page waits for a thread to load its modules
      // (most of a small page's time otherwise); a thread cut off is replaced at once.
      minThreads: this.share.limits.slots,
      maxThreads: this.share.limits.slots,
      execArgv: workerExecArgv(),
    });
    const cutOff = new AbortController();
    const { port1: started, port2 } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    started.once('message', () => {
      timer = setTimeout(() => cutOff.abort(), this.timeoutMs);
    });
    try {
      const task: ConvertTask = { ...page, started: port2 };
      return (await this.pool.run(task, { signal: cutOff.signal, transferList: [port2] })) as PageMarkdown;
    } catch (err) {
      if (cutOff.signal.aborted) {
        throw new ApiError('page_too_large', `The page took longer than ${this.timeoutMs / 1000} s to convert.`);
      }
      throw err;
    } finally {
      clearTimeout(timer);
      started.close();
    }
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.pool = undefined;
  }
}
