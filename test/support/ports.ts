/** Loopback ports for tests: free ones for servers, refusing ones and silent ones for failure paths. */
import net from 'node:net';

/** A loopback TCP port nobody listens on right now (the OS picked it, then it was released). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A loopback port that refuses connections (ECONNREFUSED): a port just released by the OS, checked
 * to refuse. Another process could take it in between; the check makes that visible rather than flaky.
 */
export async function refusingLoopbackPort(): Promise<number> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freeLoopbackPort();
    if (await refuses(port)) return port;
  }
  throw new Error('could not find a loopback port that refuses connections');
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

export interface SilentServer {
  port: number;
  close(): Promise<void>;
}

/**
 * A loopback server that accepts connections and never answers: a TLS handshake or an LDAP request
 * against it stalls until the client's own timeout fires.
 */
export function silentLoopbackServer(): Promise<SilentServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
