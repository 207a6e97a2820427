import { createServer } from 'node:net';

/**
 * Whether something already listens on host:port (EADDRINUSE when we try): checked before
 * anything starts, so that a second `npm start` beside a running one (an orphan of a stopped
 * terminal, or another server) says so and touches nothing, rather than stopping the running
 * one's PostgreSQL and taking its answers for ours.
 */
export function portInUse(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(true) : reject(error)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}
