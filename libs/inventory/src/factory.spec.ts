import { describe, expect, it } from 'vitest';
import { createInventorySource, NO_INVENTORY } from './factory.js';
import { listPath } from './kubernetes.js';
import { KNOWN_KINDS } from './kinds.js';

// Creating a postgres or http source does no I/O (pg.Pool connects lazily), so their configuration
// errors are checked here; the kubernetes source reads its kubeconfig (test/integration).
describe('creating an inventory source from its configuration', () => {
  it('answers "none" with a source that covers nothing', async () => {
    const source = createInventorySource({ source: 'none' });
    expect(source).toBe(NO_INVENTORY);
    expect(await source.list('team-a')).toEqual({ namespace: 'team-a', covers: [], objects: [] });
  });

  it('builds a postgres source on databaseUrl, covering the resources asked for', async () => {
    const source = createInventorySource({
      source: 'postgres',
      databaseUrl: 'postgres://nobody@127.0.0.1:1/none',
      relation: 'platform.objects',
      resources: [{ group: '', resource: 'pods' }],
    });
    expect(source.kind).toBe('postgres');
    expect(source.covers).toEqual([{ group: '', resource: 'pods' }]);
    await source.close();
    await source.close();
  });

  it('builds an http source covering the well-known kinds by default', () => {
    const source = createInventorySource({ source: 'http', url: 'https://platform.example.com/api/', timeoutMs: 2500 });
    expect(source.kind).toBe('http');
    expect(source.covers).toHaveLength(KNOWN_KINDS.length);
  });

  it.each([
    [
      'a relation that is not an identifier',
      () => createInventorySource({ source: 'postgres', databaseUrl: 'postgres://h/db', relation: 'objects; DROP TABLE x' }),
      /relation "objects; DROP TABLE x" must be a table or view name/,
    ],
    [
      'a resource no source can list',
      () => createInventorySource({ source: 'http', url: 'https://h', resources: [{ group: 'example.com', resource: 'widgets' }] }),
      /http inventory: cannot cover widgets\.example\.com/,
    ],
    [
      'a url that is not one',
      () => createInventorySource({ source: 'http', url: 'platform/api' }),
      /http inventory: url "platform\/api" is not a URL/,
    ],
    ['a url of another scheme', () => createInventorySource({ source: 'http', url: 'ftp://h/api' }), /must use http: or https:/],
    ['a url with a query', () => createInventorySource({ source: 'http', url: 'https://h/api?x=1' }), /must not carry a query/],
    [
      'a timeout of zero',
      () => createInventorySource({ source: 'http', url: 'https://h', timeoutMs: 0 }),
      /timeoutMs must be a positive whole number, got 0/,
    ],
    [
      'a fractional object limit',
      () => createInventorySource({ source: 'postgres', databaseUrl: 'postgres://h/db', relation: 't', maxObjects: 1.5 }),
      /maxObjects must be a positive whole number/,
    ],
  ])('refuses %s when it is created, not at the first listing', (_case, create, message) => {
    expect(create).toThrow(message);
  });
});

describe('the Kubernetes list path of a kind', () => {
  it.each([
    ['Pod', 'team-a', '/api/v1/namespaces/team-a/pods'],
    ['PersistentVolumeClaim', 'team-a', '/api/v1/namespaces/team-a/persistentvolumeclaims'],
    ['Deployment', 'team-a', '/apis/apps/v1/namespaces/team-a/deployments'],
    ['CronJob', 'team-a', '/apis/batch/v1/namespaces/team-a/cronjobs'],
    ['Pod', 'a/../b', '/api/v1/namespaces/a%2F..%2Fb/pods'],
  ])('lists %s in %s at %s', (kind, namespace, path) => {
    const known = KNOWN_KINDS.find((k) => k.kind === kind);
    if (!known) throw new Error(`no ${kind}`);
    expect(listPath(known, namespace)).toBe(path);
  });
});
