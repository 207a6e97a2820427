import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server (bytes passed through, TLS untouched: a certificate for
 * 127.0.0.1 stays valid), whose requests can be slowed: while `delayMs` is set, every chunk a
 * client sends waits that long before it goes on. A slow network or a loaded apiserver, on demand.
 */
export interface SlowProxy {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  delayMs: number;
  close(): Promise<void>;
}

export async function startSlowProxy(target: { host: string; port: number }): Promise<SlowProxy> {
  const sockets = new Set<Socket>();
  const proxy: { delayMs: number } = { delayMs: 0 };
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => [client, upstream].forEach((s) => s.destroy()));
    }
    // In order, each chunk after the one before it: a delay never reorders bytes.
    let queue = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      const delay = proxy.delayMs;
      queue = queue.then(() => new Promise<void>((resolve) => setTimeout(resolve, delay))).then(() => void upstream.write(chunk));
    });
    client.on('end', () => void queue.then(() => upstream.end()));
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    get delayMs() {
      return proxy.delayMs;
    },
    set delayMs(value: number) {
      proxy.delayMs = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
