import type { ServerResponse } from 'node:http';

/**
 * What trpc-to-openapi's handler writes to, in place of the real response: it always writes its
 * own error body (`message`, `code`, `issues`), and the spec wants `{ error, reason? }`, so the
 * REST binding looks at what was recorded and writes the real response itself. Listeners (the
 * handler watches for the client going away) go to the real response.
 */
export class RecordedResponse {
  statusCode = 200;
  readonly headers: Record<string, string | number | readonly string[]> = {};
  body: string | undefined;

  constructor(readonly target: ServerResponse) {}

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers[name.toLowerCase()] = value;
    return this;
  }

  end(body?: string): void {
    this.body = body;
  }

  get writableEnded(): boolean {
    return this.target.writableEnded;
  }

  once(event: string, listener: (...args: unknown[]) => void): this {
    this.target.once(event, listener);
    return this;
  }

  off(event: string, listener: (...args: unknown[]) => void): this {
    this.target.off(event, listener);
    return this;
  }
}
