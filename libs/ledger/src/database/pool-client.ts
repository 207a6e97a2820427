import pg from 'pg';

/**
 * The pg.Client of every pool of the ledger (data-source.ts; host-failover.ts extends it).
 *
 * An 'error' event that nobody listens to ends a Node process, and a pooled connection had a
 * moment with no listener. pg-pool takes its own listener off a client as it hands it out.
 * TypeORM's query runner puts its listener on one promise turn later. A new connection is handed
 * out from inside its socket's read (the start-up's ReadyForQuery). When the same read also
 * carried the server's FATAL (pg_terminate_backend, a shutdown, a failover just after the
 * start-up), the 'error' fell into that gap and the API exited: the fault suite saw it once, and
 * test/integration/pool-connection-errors.test.ts makes it happen in about a second.
 *
 * This client always listens, and does nothing more: the error still fails the query in flight
 * (pg hands it to every queued query), the client is no longer queryable, and pg-pool drops such
 * a client when it comes back, so the next checkout connects anew.
 */
export class LedgerPoolClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}
