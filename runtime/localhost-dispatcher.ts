import { Agent } from 'undici';

/**
 * An HTTP dispatcher that resolves every name to 127.0.0.1. Pay URLs in development are
 * `{slug}.pay.localhost`, which not every resolver answers; demos and tests install this as
 * undici's global dispatcher so unmodified fetch-based clients reach the local proxy.
 */
export function localhostDispatcher(): Agent {
  return new Agent({
    connect: {
      lookup: (_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) =>
        options?.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4),
    },
  } as ConstructorParameters<typeof Agent>[0]);
}
