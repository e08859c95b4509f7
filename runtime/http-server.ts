import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export class ListenError extends Error {
  override name = 'ListenError';
}

/** Listens and resolves with the bound port; a taken or forbidden port becomes one clear line. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'is already in use'
          : err.code === 'EACCES'
            ? 'needs privileges this process lacks'
            : err.code === 'EADDRNOTAVAIL'
              ? 'is on an address this machine does not have'
              : `failed (${err.code ?? err.message})`;
      reject(new ListenError(`cannot listen on ${host}:${port}: the port ${why}`));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting, lets in-flight requests finish (up to `graceMs`), then drops what remains. */
export function closeServer(server: Server, graceMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
