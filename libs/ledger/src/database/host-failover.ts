import pg from 'pg';
import { LedgerPoolClient } from './pool-client.js';
import { describeHost, parseDatabaseUrl, type DatabaseHost, type DatabaseUrl, type TargetSessionAttrs } from './database-url.js';

/**
 * Host failover for node-postgres, in the one place every pool of the ledger gets it
 * (data-source.ts): libpq's multi-host URLs with `target_session_attrs`, which pg 8 does not
 * implement. Each pooled connection goes to the host that last matched (first connection: every
 * host is probed at once, and the first to answer that matches wins) and checks
 * on itself that it still matches before the pool hands it out (`SHOW transaction_read_only`,
 * `pg_is_in_recovery()`: one round trip per new connection). A connection that fails, or that
 * finds its host no longer matching (a primary now a standby), makes the next connection probe
 * every host again. After a failover the pool's broken connections are discarded as they fail
 * (pg-pool drops a client that is no longer queryable), and the new ones go to the promoted
 * standby: no process restart.
 *
 * A connection that cannot be made where the URL wants it fails with SQLSTATE 08001, which the
 * ledger reads as "the database is unreachable" (postgres-errors.ts): admissions answer 503 and
 * are retried by their callers; the projection worker and the reconciler try again.
 */

export interface HostFailoverOptions {
  /** Longest a probe of one host may take, in ms (default: the pool's connection timeout, else 5 s). */
  readonly probeTimeoutMs?: number;
  /** Told when connections move to another host (the first choice included). */
  readonly onHostChosen?: (host: string, previous: string | undefined) => void;
  /** The database a probe connects to, when not the URL's (one that may not exist yet). */
  readonly probeDatabase?: string;
}

const DEFAULT_PROBE_TIMEOUT_MS = 5000;

/** What a session reports about its server. */
interface Role {
  readonly recovery: boolean;
  readonly readOnly: boolean;
}

const ROLE_SQL = `SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') = 'on' AS read_only`;

function matches(attrs: TargetSessionAttrs, role: Role, standbyOnly: boolean): boolean {
  switch (attrs) {
    case 'any':
      return true;
    case 'read-write':
      return !role.readOnly;
    case 'read-only':
      return role.readOnly;
    case 'primary':
      return !role.recovery;
    case 'standby':
      return role.recovery;
    case 'prefer-standby':
      return standbyOnly ? role.recovery : true;
  }
}

async function roleOf(client: pg.ClientBase): Promise<Role> {
  const { rows } = await client.query<{ recovery: boolean; read_only: boolean }>(ROLE_SQL);
  return { recovery: rows[0]?.recovery === true, readOnly: rows[0]?.read_only === true };
}

/** SQLSTATE 08001: no connection could be made where the URL wants one. */
export class NoMatchingHost extends Error {
  readonly code = '08001';
  constructor(message: string) {
    super(message);
    this.name = 'NoMatchingHost';
  }
}

/** Which host the connections of one pool go to, found by probing and forgotten when it fails. */
class HostLocator {
  private chosen: DatabaseHost | undefined;
  private lastChosen: DatabaseHost | undefined;
  private probing: Promise<DatabaseHost> | undefined;

  constructor(
    private readonly url: DatabaseUrl,
    private readonly options: HostFailoverOptions,
  ) {}

  /** The host to connect to: the last that matched, else the first of the list that matches now. */
  locate(config: pg.ClientConfig): Promise<DatabaseHost> {
    if (this.chosen) return Promise.resolve(this.chosen);
    this.probing ??= this.probe(config).finally(() => (this.probing = undefined));
    return this.probing;
  }

  /** A connection to `host` failed or no longer matches: the next one probes again. */
  forget(host: DatabaseHost): void {
    if (this.chosen === host) this.chosen = undefined;
  }

  /**
   * Every host at once; the first to answer that matches wins (for prefer-standby, the first
   * standby, else the first host of the list that answered). Not the list's order: a host that does
   * not answer at all (a machine gone, not a refused port) would hold every probe for its timeout,
   * longer than the pool waits for a connection, and no connection would ever be made.
   */
  private probe(config: pg.ClientConfig): Promise<DatabaseHost> {
    const attrs = this.url.targetSessionAttrs;
    const hosts = this.url.hosts;
    const results: (Role | string | undefined)[] = hosts.map(() => undefined);
    return new Promise((resolve, reject) => {
      let pending = hosts.length;
      let done = false;
      hosts.forEach((host, i) => {
        void this.probeOne(host, config).then((result) => {
          results[i] = result;
          pending--;
          if (done) return;
          if (typeof result !== 'string' && matches(attrs, result, true)) {
            done = true;
            resolve(this.choose(host));
          } else if (pending === 0) {
            done = true;
            const fallback = hosts.find((_, j) => typeof results[j] === 'object' && matches(attrs, results[j] as Role, false));
            if (fallback) resolve(this.choose(fallback));
            else
              reject(
                new NoMatchingHost(
                  `no host of the database URL accepts a session with target_session_attrs=${attrs} (${hosts.map((h, j) => `${describeHost(h)}: ${problemOf(results[j])}`).join('; ')})`,
                ),
              );
          }
        });
      });
    });
  }

  private async probeOne(host: DatabaseHost, config: pg.ClientConfig): Promise<Role | string> {
    const timeoutMs = this.options.probeTimeoutMs ?? (config.connectionTimeoutMillis || DEFAULT_PROBE_TIMEOUT_MS);
    let target = this.url.urlFor(host);
    if (this.options.probeDatabase !== undefined) {
      const other = new URL(target);
      other.pathname = `/${encodeURIComponent(this.options.probeDatabase)}`;
      target = other.toString();
    }
    const client = new pg.Client({ ...withoutPoolOptions(config), connectionString: target, connectionTimeoutMillis: timeoutMs });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await roleOf(client);
    } catch (error) {
      return error instanceof Error ? error.message || error.name : String(error);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  private choose(host: DatabaseHost): DatabaseHost {
    const previous = this.lastChosen;
    this.chosen = host;
    this.lastChosen = host;
    if (previous !== host) this.options.onHostChosen?.(describeHost(host), previous && describeHost(previous));
    return host;
  }
}

function problemOf(result: Role | string | undefined): string {
  if (typeof result === 'string') return result;
  if (result?.recovery) return 'a standby (in recovery)';
  return result?.readOnly ? 'read-only' : 'a primary (accepts writes)';
}

/** The client settings of a pool's options (pg-pool hands a client all of them). */
function withoutPoolOptions(config: pg.ClientConfig): pg.ClientConfig {
  const { Client: _client, max: _max, ...rest } = config as pg.ClientConfig & { Client?: unknown; max?: unknown };
  return rest;
}

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;

/**
 * A pg.Client class for a pool (pg-pool's `Client` option, which TypeORM passes through
 * `extra`): each instance connects to the host the pool's locator chooses, and refuses to be
 * handed out if that host no longer matches the URL's `target_session_attrs`.
 */
export function failoverClientClass(url: DatabaseUrl, options: HostFailoverOptions = {}): typeof pg.Client {
  const locator = new HostLocator(url, options);
  class FailoverClient extends LedgerPoolClient {
    private readonly settings: pg.ClientConfig;

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.settings = typeof config === 'object' ? config : {};
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
      const connecting = this.connectToChosenHost();
      if (!callback) return connecting;
      connecting.then(
        (client) => callback(null, client),
        (error: Error) => callback(error),
      );
    }

    private async connectToChosenHost(): Promise<pg.Client> {
      const host = await locator.locate(this.settings);
      if (host.host !== '') {
        const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
        self.host = self.connectionParameters.host = host.host;
        if (host.port !== undefined) self.port = self.connectionParameters.port = host.port;
      }
      // From here an error of the connection is an event (its role query running, or later): the
      // pool listens only once connect() has answered, and an event nobody listens to ends the process.
      this.on('error', () => locator.forget(host));
      try {
        await super.connect();
        const role = await roleOf(this);
        if (!matches(url.targetSessionAttrs, role, false)) {
          throw new NoMatchingHost(
            `${describeHost(host)} no longer accepts a session with target_session_attrs=${url.targetSessionAttrs}: it is ${role.recovery ? 'a standby' : 'read-only'}`,
          );
        }
      } catch (error) {
        locator.forget(host);
        await this.end().catch(() => undefined);
        throw error;
      }
      return this;
    }
  }
  return FailoverClient;
}

/**
 * The single-host URL of the host `url` wants now (itself when it names one host and no session
 * attribute): for a process that opens its own connections, as the migration does, which probes
 * the hosts' `probeDatabase` (its database may not exist yet).
 */
export async function resolveDatabaseUrl(url: string, probeDatabase?: string): Promise<string> {
  const parsed = parseDatabaseUrl(url);
  if (!parsed.needsFailover) return url;
  return parsed.urlFor(await new HostLocator(parsed, probeDatabase === undefined ? {} : { probeDatabase }).locate({}));
}
