import { Counter, type Registry } from 'prom-client';

/**
 * A Prometheus counter that mirrors a running total kept elsewhere (the ledger's retries, the
 * reconciler's stats): at each scrape it adds what the total gained since the last one, so
 * the hot path only bumps a plain number.
 */
export function mirroredCounter(options: { name: string; help: string; registers: Registry[]; read: () => number | undefined }): Counter {
  let seen = 0;
  return new Counter({
    name: options.name,
    help: options.help,
    registers: options.registers,
    collect() {
      const total = options.read();
      if (total === undefined) return;
      this.inc(total - seen);
      seen = total;
    },
  });
}
