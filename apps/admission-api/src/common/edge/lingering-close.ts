import type { IncomingMessage } from 'node:http';

/** How long a refused request's connection is kept after its answer, its remaining bytes read and dropped, before it is destroyed. */
export const LINGER_MS = 2_000;

/**
 * Closes a connection whose request body was refused before its end, once the answer has gone
 * out, the way a web server's lingering close does: the answer is followed by a FIN, and what the
 * client still sends is read and dropped for at most LINGER_MS, then the socket is destroyed.
 * Destroyed at once, unread bytes in the kernel's buffer make it send a reset, and a client
 * still writing its body gets ECONNRESET instead of the 413 that was written to it.
 */
export function closeAfterAnswer(request: IncomingMessage): void {
  const socket = request.socket;
  request.resume();
  socket.end();
  const timer = setTimeout(() => request.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
