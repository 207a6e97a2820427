import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubernetesInventory, InventoryError } from '@quota/inventory';

/**
 * We cannot run a Kubernetes API server here: this is a FAKE API server (node:http) that
 * serves RECORDED list responses (test/fixtures/kubernetes/), reached through a kubeconfig
 * the way a real cluster is.
 */
const fixture = async (name: string): Promise<string> => readFile(new URL(`../fixtures/kubernetes/${name}`, import.meta.url), 'utf8');

let server: Server;
let dir: string;
let kubeconfig: string;
const seen: string[] = [];
let behaviour: 'recorded' | 'forbidden' | 'gone-on-continue' | 'hang' = 'recorded';

const emptyList = (kind: string) => JSON.stringify({ kind, apiVersion: 'v1', metadata: { resourceVersion: '48211' }, items: [] });

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://fake');
  seen.push(`${url.pathname}${url.search}`);
  const send = (status: number, body: string) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(body);
  };
  if (behaviour === 'hang') return; // never answers
  if (behaviour === 'forbidden') {
    return send(403, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'pods is forbidden: User "system:serviceaccount:quota:reconciler" cannot list resource "pods" in API group "" in the namespace "team-a"', reason: 'Forbidden', code: 403 }));
  }
  if (url.pathname === '/api/v1/namespaces/team-a/pods') {
    if (!url.searchParams.get('continue')) return send(200, await fixture('pods-page-1.json'));
    if (behaviour === 'gone-on-continue') {
      return send(410, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'The provided continue parameter is too old to display a consistent list result.', reason: 'Expired', code: 410 }));
    }
    return send(200, await fixture('pods-page-2.json'));
  }
  if (url.pathname === '/api/v1/namespaces/team-a/persistentvolumeclaims') return send(200, await fixture('persistentvolumeclaims.json'));
  const kind = url.pathname.split('/').at(-1) ?? 'List';
  return send(200, emptyList(`${kind}List`));
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  dir = await mkdtemp(join(tmpdir(), 'ql-kubeconfig-'));
  kubeconfig = join(dir, 'config');
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      // client-node refuses plain http unless told the cluster is not verified; the fake is local.
      `- name: fake\n  cluster:\n    server: http://127.0.0.1:${port}\n    insecure-skip-tls-verify: true`,
      'users:',
      '- name: reconciler\n  user:\n    token: test-token',
      'contexts:',
      '- name: fake\n  context:\n    cluster: fake\n    user: reconciler',
      'current-context: fake',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('kubernetes inventory source against a fake API server with recorded responses', () => {
  it('lists every covered kind in the namespace, following continue tokens, and fills in apiVersion and kind', async () => {
    behaviour = 'recorded';
    seen.length = 0;
    const source = createKubernetesInventory({ kubeconfigPath: kubeconfig, pageSize: 2 });
    const inventory = await source.list('team-a');
    expect(inventory.objects.map((o) => [o.groupResource.resource, o.name, o.uid])).toEqual([
      ['pods', 'web-5d8f9c74b7-2xkqz', '0b8f3c5e-6f1d-4a7e-9d52-1f0c4a3b7e11'],
      ['pods', 'web-5d8f9c74b7-k8wq2', '7c2e9a10-2b4f-4c8d-8e3a-5d6f7a8b9c22'],
      ['pods', 'batch-import-7x2lp', 'e4d3c2b1-9a8f-4e7d-b6c5-a4b3c2d1e033'],
      ['persistentvolumeclaims', 'data-db-0', '3f2e1d0c-8b7a-4695-a4b3-c2d1e0f9a844'],
    ]);
    expect(inventory.objects[0]?.object).toMatchObject({ apiVersion: 'v1', kind: 'Pod', metadata: { creationTimestamp: '2026-11-20T09:14:03.000Z' }, spec: { containers: [{ resources: { requests: { cpu: '250m' } } }] } });
    expect(inventory.covers).toContainEqual({ group: 'apps', resource: 'deployments' });
    // The namespace is in the path, the page size in limit, the second page asked by continue.
    expect(seen).toContain('/api/v1/namespaces/team-a/pods?limit=2');
    expect(seen.filter((s) => s.startsWith('/api/v1/namespaces/team-a/pods?') && s.includes('continue=eyJ2Ij') && s.includes('limit=2'))).toHaveLength(1);
    expect(seen).toContain('/apis/apps/v1/namespaces/team-a/deployments?limit=2');
    expect(seen).toContain('/apis/batch/v1/namespaces/team-a/cronjobs?limit=2');
  });

  it.each([
    ['a 403 (RBAC missing)', 'forbidden' as const, /HTTP 403/],
    ['a 410 on a continue token (the list changed too much)', 'gone-on-continue' as const, /HTTP 410/],
  ])('refuses the whole listing on %s: a partial list would release live reservations', async (_case, mode, message) => {
    behaviour = mode;
    const source = createKubernetesInventory({ kubeconfigPath: kubeconfig, pageSize: 2 });
    const error = await source.list('team-a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InventoryError);
    expect(String((error as Error).message)).toMatch(message);
  });

  it('gives up on a server that does not answer within the timeout', async () => {
    behaviour = 'hang';
    const source = createKubernetesInventory({ kubeconfigPath: kubeconfig, timeoutMs: 300, resources: [{ group: '', resource: 'pods' }] });
    const error = await source.list('team-a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InventoryError);
    expect((error as Error).message).toContain('took longer than 300 ms');
    behaviour = 'recorded';
  });
});
