import { describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from './database-url.js';

describe('parseDatabaseUrl', () => {
  it('reads libpq’s host list and target_session_attrs, and gives pg one single-host URL per host', () => {
    const url = parseDatabaseUrl(
      'postgres://ql:s%40cret@db-a:5432,db-b:6432,[::1]/ledger?sslmode=disable&target_session_attrs=read-write&application_name=x',
    );
    expect(url.hosts).toEqual([{ host: 'db-a', port: 5432 }, { host: 'db-b', port: 6432 }, { host: '::1' }]);
    expect(url.targetSessionAttrs).toBe('read-write');
    expect(url.needsFailover).toBe(true);
    expect(url.hosts.map((h) => url.urlFor(h))).toEqual([
      'postgres://ql:s%40cret@db-a:5432/ledger?sslmode=disable&application_name=x',
      'postgres://ql:s%40cret@db-b:6432/ledger?sslmode=disable&application_name=x',
      'postgres://ql:s%40cret@[::1]/ledger?sslmode=disable&application_name=x',
    ]);
  });

  it("reads libpq's connect_timeout, which pg does not", () => {
    expect(parseDatabaseUrl('postgres://a,b/db?connect_timeout=3').connectTimeoutMs).toBe(3000);
    expect(parseDatabaseUrl('postgres://a,b/db?connect_timeout=1').connectTimeoutMs).toBe(2000);
    expect(parseDatabaseUrl('postgres://a,b/db?connect_timeout=0').connectTimeoutMs).toBeUndefined();
  });

  it('leaves a one-host URL without session attributes to pg as it is', () => {
    const url = parseDatabaseUrl('postgresql://postgres@127.0.0.1:5432/postgres');
    expect(url).toMatchObject({ hosts: [{ host: '127.0.0.1', port: 5432 }], targetSessionAttrs: 'any', needsFailover: false });
    expect(parseDatabaseUrl('postgres:///ledger?host=/var/run/postgresql').needsFailover).toBe(false);
  });

  it('checks one host for its session attribute (a DNS name or address that follows the primary)', () => {
    const url = parseDatabaseUrl('postgres://db/ledger?target_session_attrs=primary');
    expect(url).toMatchObject({ hosts: [{ host: 'db' }], targetSessionAttrs: 'primary', needsFailover: true });
    expect(url.urlFor({ host: 'db' })).toBe('postgres://db/ledger');
  });

  it.each([
    [
      'postgres://a,b/db?target_session_attrs=writable',
      /target_session_attrs must be one of any, read-write, read-only, primary, standby, prefer-standby, got "writable"/,
    ],
    ['postgres://a:5432,,b/db', /cannot read the host ""/],
    ['postgres://a:99999,b/db', /port 99999 of host "a"/],
    ['mysql://a,b/db', /postgres:\/\/ or postgresql:\/\//],
  ])('refuses %s, saying why', (raw, message) => {
    expect(() => parseDatabaseUrl(raw)).toThrow(message);
  });
});
