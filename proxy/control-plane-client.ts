import { createTRPCUntypedClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { Agent, fetch as undiciFetch } from 'undici';
import { contract, type ProcedureInput, type ProcedureName, type ProcedureOutput } from '../shared/contract.js';
import { ApiError, type ErrorBody } from '../shared/errors.js';

/** A call the proxy makes to the control-plane; refusals arrive as the `ApiError` the control-plane threw. */
export type ControlPlaneClient = {
  call<Name extends ProcedureName>(name: Name, ...input: CallInput<Name>): Promise<ProcedureOutput<Name>>;
};
type CallInput<Name extends ProcedureName> = undefined extends ProcedureInput<Name> ? [] : [ProcedureInput<Name>];

/** Keep-alive connections to the control-plane; the proxy calls it on cache misses and payments. */
export function createControlPlaneClient(
  baseUrl: string,
  internalToken: string,
): { client: ControlPlaneClient; close: () => Promise<void> } {
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 32 });
  const trpc = createTRPCUntypedClient<AnyRouter>({
    links: [
      httpBatchLink({
        url: `${baseUrl}/trpc`,
        headers: { authorization: `Bearer ${internalToken}` },
        fetch: (url, init) =>
          undiciFetch(url as string, {
            ...(init as object),
            dispatcher,
            // The longest call is a key mint, held to the seller's 7 s budget.
            signal: AbortSignal.timeout(10_000),
          }) as unknown as Promise<Response>,
      }),
    ],
  });
  const client: ControlPlaneClient = {
    call(name, ...[input]) {
      const path = `internal.${name}`;
      const sent = contract[name].kind === 'query' ? trpc.query(path, input) : trpc.mutation(path, input);
      return (sent as Promise<never>).catch((err: unknown) => {
        throw refusalOf(err) ?? err;
      });
    },
  };
  return { client, close: () => dispatcher.close() };
}

/** The `ApiError` a failed call carries in the spec's envelope (trpc/init.ts puts it there). */
function refusalOf(err: unknown): ApiError | undefined {
  if (!(err instanceof TRPCClientError)) return undefined;
  const data = err.data as { envelope?: ErrorBody; httpStatus?: number } | undefined;
  if (!data?.envelope || typeof data.envelope.error !== 'string' || !data.httpStatus || data.httpStatus === 500) return undefined;
  return ApiError.fromBody(data.httpStatus, data.envelope);
}
