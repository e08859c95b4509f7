import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Tracing } from '../runtime/tracing.js';
import type { HubConfig } from '../shared/config.js';
import type { Agentify } from './agentify/agentify.js';
import type { Db, Provider } from './db/client.js';
import type { MailWorker } from './mail/outbox.js';
import type { PageViewIntake } from './page-views/ingest.js';
import type { PaymentRails } from './payments/rails.js';

/** What every part of the control-plane is handed: built once at start-up. */
export type ControlPlaneServices = {
  config: HubConfig;
  db: Db;
  provider: Provider;
  logger: Logger;
  masterKey: Buffer;
  internalToken: string;
  /**
   * The rails payments are taken on: the live one and, beside it, a test rail for sandbox sellers;
   * none until one is configured (payments/rails.ts).
   */
  rails: PaymentRails;
  /** Sends queued mail; `wake` after committing a mail to send it now rather than at the next poll. */
  mail: Pick<MailWorker, 'wake'>;
  /** Delivers account writes; `wake` after committing one. Absent where nothing delivers them (most tests). */
  accountWrites?: { wake(): void } | undefined;
  /** Page-view reports: the write buffer, the per-organization budget, the seller owners. */
  pageViews: PageViewIntake;
  /** Pages of sellers' sites as markdown: the fetch policy, the converter pool, the budget. */
  agentify: Agentify;
  /** The process's tracing (runtime/trace-export.ts), started with the services; absent when off. */
  tracing?: Tracing | undefined;
};

/** Per request: the services plus the raw HTTP exchange (credentials are read from it lazily). */
export type RequestContext = ControlPlaneServices & {
  req: IncomingMessage;
  res: ServerResponse;
};
