import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';

/**
 * Tells undici to abandon the upstream request when the agent goes away before its response is
 * done. undici takes an EventEmitter with an 'abort' event as the request's signal; one costs far
 * less to make per request than an AbortController and its AbortSignal.
 */
export class ClientGone extends EventEmitter {
  aborted = false;

  constructor(res: ServerResponse) {
    super();
    res.once('close', () => {
      if (res.writableFinished) return;
      this.aborted = true;
      this.emit('abort');
    });
  }
}
