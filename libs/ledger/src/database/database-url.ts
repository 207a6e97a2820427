/**
 * PostgreSQL connection URLs naming several hosts, as libpq reads them
 * (`postgres://user@db-a:5432,db-b:5432/ledger?target_session_attrs=read-write`): node-postgres
 * (pg 8) parses only one host (`new URL` refuses the list), so the ledger reads the list here and
 * hands pg one single-host URL per host (host-failover.ts chooses which).
 */

/** libpq's `target_session_attrs`: which of the hosts a session may use. */
export type TargetSessionAttrs = 'any' | 'read-write' | 'read-only' | 'primary' | 'standby' | 'prefer-standby';

export const TARGET_SESSION_ATTRS: readonly TargetSessionAttrs[] = [
  'any',
  'read-write',
  'read-only',
  'primary',
  'standby',
  'prefer-standby',
];

export interface DatabaseHost {
  /** As pg takes it: an IPv6 address without its brackets. */
  readonly host: string;
  /** Absent: pg's default (PGPORT, else 5432). */
  readonly port?: number;
}

export interface DatabaseUrl {
  readonly hosts: readonly DatabaseHost[];
  readonly targetSessionAttrs: TargetSessionAttrs;
  /** libpq's `connect_timeout` (seconds in the URL), in ms; pg itself does not read it. */
  readonly connectTimeoutMs?: number;
  /** Whether connecting needs more than pg does alone: several hosts, or a session attribute to check. */
  readonly needsFailover: boolean;
  /** The URL with this host only and without `target_session_attrs`: what pg parses. */
  urlFor(host: DatabaseHost): string;
}

/** scheme, user info, the host list, and the rest (path and query). */
const URL_PARTS = /^(postgres(?:ql)?:\/\/)(?:([^@/?]*)@)?([^/?]*)(.*)$/i;
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::([0-9]{1,5}))?$/;
const ATTRS_PARAM = /^target_session_attrs=(.*)$/;

/**
 * The hosts and session attribute of a `postgres://` URL. Throws (naming what is wrong) on a host
 * list it cannot read or an attribute libpq does not know. A URL without a host list (a Unix
 * socket named in the query) is one "host" that is the URL itself.
 */
export function parseDatabaseUrl(url: string): DatabaseUrl {
  const parts = URL_PARTS.exec(url);
  if (!parts) throw new Error('must be a postgres:// or postgresql:// URL');
  const [, scheme = '', userInfo, hostList = '', rest = ''] = parts;
  const [pathPart = '', query, ...more] = rest.split('?');
  if (more.length > 0) throw new Error('has more than one "?"');
  const params = query === undefined ? [] : query.split('&');
  const attrs = params.map((p) => ATTRS_PARAM.exec(p)?.[1]).filter((v): v is string => v !== undefined);
  const targetSessionAttrs = (attrs.at(-1) ?? 'any') as TargetSessionAttrs;
  if (!TARGET_SESSION_ATTRS.includes(targetSessionAttrs))
    throw new Error(`target_session_attrs must be one of ${TARGET_SESSION_ATTRS.join(', ')}, got "${targetSessionAttrs}"`);
  const kept = params.filter((p) => p !== '' && !ATTRS_PARAM.test(p));
  const tail = `${pathPart}${kept.length > 0 ? `?${kept.join('&')}` : ''}`;
  const hosts = hostList === '' ? [] : hostList.split(',').map(hostOf);
  const urlFor = (host: DatabaseHost): string =>
    hosts.length === 0
      ? `${scheme}${userInfo === undefined ? '' : `${userInfo}@`}${tail}`
      : `${scheme}${userInfo === undefined ? '' : `${userInfo}@`}${hostText(host)}${tail}`;
  const timeout = params
    .map((p) => /^connect_timeout=([0-9]+)$/.exec(p)?.[1])
    .filter((v) => v !== undefined)
    .at(-1);
  return {
    hosts: hosts.length === 0 ? [{ host: '' }] : hosts,
    targetSessionAttrs,
    // libpq: 0 waits forever, and less than 2 s counts as 2.
    ...(timeout === undefined || timeout === '0' ? {} : { connectTimeoutMs: Math.max(2, Number(timeout)) * 1000 }),
    needsFailover: hosts.length > 1 || targetSessionAttrs !== 'any',
    urlFor,
  };
}

function hostOf(entry: string): DatabaseHost {
  const match = HOST_PORT.exec(entry);
  if (!match) throw new Error(`cannot read the host "${entry}" (a list is host[:port],host[:port],…)`);
  const [, name = '', port] = match;
  const host = name.startsWith('[') ? name.slice(1, -1) : name;
  if (port === undefined || port === '') return { host };
  const number = Number(port);
  if (number < 1 || number > 65535) throw new Error(`port ${port} of host "${host}" is not between 1 and 65535`);
  return { host, port: number };
}

function hostText(host: DatabaseHost): string {
  const name = host.host.includes(':') ? `[${host.host}]` : host.host;
  return host.port === undefined ? name : `${name}:${host.port}`;
}

/** `host:port` for messages. */
export function describeHost(host: DatabaseHost): string {
  return host.host === '' ? 'the default socket' : hostText(host);
}
