import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { Agent, fetch as undiciFetch } from 'undici';
import type { AppRouter } from '../control-plane/router.js';

/** Keep-alive connections to the control-plane; the proxy calls it on cache misses and payments. */
export function createControlPlaneClient(baseUrl: string, internalToken: string) {
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 32 });
  const client = createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${baseUrl}/trpc`,
        headers: { authorization: `Bearer ${internalToken}` },
        fetch: (url, init) =>
          undiciFetch(url as string, {
            ...(init as object),
            dispatcher,
            signal: AbortSignal.timeout(5_000),
          }) as unknown as Promise<Response>,
      }),
    ],
  });
  return { client, close: () => dispatcher.close() };
}

export type ControlPlaneClient = ReturnType<typeof createControlPlaneClient>['client'];
