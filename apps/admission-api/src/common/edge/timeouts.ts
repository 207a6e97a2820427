import type { Server } from 'node:http';
import type { AppConfig } from '@quota/config';

/** How often Node looks for requests past their timeouts (its default, 30 s, let a 20 s timeout run to 50 s). */
export const TIMEOUT_CHECK_MS = 1000;

/**
 * Slow clients cannot hold a connection open: the whole request within REQUEST_TIMEOUT_MS,
 * its headers within 20 s (or sooner). Node enforces both only when it checks its connections,
 * every `connectionsCheckingInterval` (read when the server starts listening), so it checks
 * every second: a timeout is then kept to within a second of what is configured.
 */
export function applyTimeouts(server: Server, config: Pick<AppConfig, 'requestTimeoutMs'>): void {
  server.requestTimeout = config.requestTimeoutMs;
  server.headersTimeout = Math.min(config.requestTimeoutMs, 20_000);
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = TIMEOUT_CHECK_MS;
}
