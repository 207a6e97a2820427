import { describe, expect, it } from 'vitest';
import type { Request, Response } from 'express';
import type { AppConfig } from '@quota/config';
import type { ClusterQueries, ClusterWriter, DefinitionQueries, LedgerClock, QueueQueries, SharedUsageQueries } from '@quota/ledger';
import { ClusterResourceQuotasController } from '../cluster-resource-quotas/cluster-resource-quotas.controller.js';
import { HierarchicalResourceQuotasController } from '../hierarchical-resource-quotas/hierarchical-resource-quotas.controller.js';
import { NamespaceObjectsController } from '../namespaces/namespace-objects.controller.js';

/**
 * The answers of the kinds served by DefinitionHandlers that the e2e tests do not pin: how each
 * names itself in a 404, the shape of its list, what its PUT hands the ledger.
 */
const sharedView = (kind: string, name: string, namespace?: string) => ({
  key: '',
  version: 3,
  createdAt: '2026-01-01T00:00:00Z',
  definition: { ref: { kind, name, ...(namespace ? { namespace } : {}) }, spec: { hard: { pods: '2' } } },
  hard: { pods: '2' },
  used: { pods: '0' },
  namespaces: [],
  overHard: false,
});

function fakes() {
  const puts: unknown[] = [];
  const writer = {
    putSharedQuota: async (definition: { ref: { kind: string; name: string; namespace?: string } }, options: unknown) => {
      puts.push({ definition, options });
      return {
        created: true,
        changed: true,
        view: sharedView(definition.ref.kind, definition.ref.name, definition.ref.namespace),
        position: '7',
      };
    },
    putNamespace: async (definition: unknown, options: unknown) => {
      puts.push({ definition, options });
      return {
        created: false,
        changed: true,
        view: { name: 'team-a', version: 2, createdAt: '2026-01-01T00:00:00Z', definition },
        position: '8',
      };
    },
    deleteNamespace: async () => {
      throw new Error('not reached');
    },
  } as unknown as ClusterWriter;
  const queries = {
    getSharedQuota: async () => undefined,
    getNamespace: async () => undefined,
    listSharedQuotas: async (prefix: string) => (prefix === 'clusterresourcequotas/' ? [sharedView('ClusterResourceQuota', 'acme')] : []),
  } as unknown as ClusterQueries;
  const definitions = {
    sharedQuotaHistory: async () => undefined,
    namespaceHistory: async () => undefined,
  } as unknown as DefinitionQueries;
  const none = {} as unknown;
  const crq = new ClusterResourceQuotasController(
    writer,
    queries,
    definitions,
    none as SharedUsageQueries,
    none as LedgerClock,
    none as QueueQueries,
  );
  const hrq = new HierarchicalResourceQuotasController(
    writer,
    queries,
    definitions,
    none as SharedUsageQueries,
    none as LedgerClock,
    none as QueueQueries,
  );
  const config = { admission: { plugins: undefined } } as unknown as AppConfig;
  const namespaces = new NamespaceObjectsController(writer, queries, definitions, config);
  return { crq, hrq, namespaces, puts };
}

const request = { headers: { 'x-remote-user': 'alice' } } as unknown as Request;
function response() {
  const sent: { status?: number; headers: Record<string, string> } = { headers: {} };
  const res = {
    status: (code: number) => ((sent.status = code), res),
    setHeader: (name: string, value: string) => void (sent.headers[name] = value),
  };
  return { res: res as unknown as Response, sent };
}

const failure = async (answer: Promise<unknown>) => {
  const error = (await answer.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: string; message: string; details: unknown };
  return { code: error.code, message: error.message, details: error.details };
};

describe('the definition kinds of DefinitionHandlers', () => {
  it('name themselves in a 404 as before: a CRD resource with its group where Kubernetes does', async () => {
    const { crq, hrq, namespaces } = fakes();
    expect(await failure(crq.get('acme'))).toEqual({
      code: 'NotFound',
      message: 'clusterresourcequotas "acme" not found',
      details: { kind: 'clusterresourcequotas', name: 'acme' },
    });
    expect(await failure(hrq.get('org', 'pods'))).toEqual({
      code: 'NotFound',
      message: 'hierarchicalresourcequotas.hnc.x-k8s.io "pods" not found',
      details: { kind: 'hierarchicalresourcequotas', name: 'pods' },
    });
    expect(await failure(namespaces.get('gone'))).toEqual({
      code: 'NotFound',
      message: 'namespaces "gone" not found',
      details: { kind: 'namespaces', name: 'gone' },
    });
    expect(await failure(crq.history('acme', {}))).toMatchObject({
      message: 'clusterresourcequotas "acme" has no history: it never existed',
    });
    expect(await failure(hrq.history('org', 'pods', {}))).toMatchObject({
      message: 'hierarchicalresourcequotas "pods" has no history: it never existed',
      details: { kind: 'hierarchicalresourcequotas', name: 'pods' },
    });
    expect(await failure(namespaces.history('gone', {}))).toMatchObject({ message: 'namespaces "gone" has no history: it never existed' });
  });

  it('list in their own group, and a cluster-scoped PUT hands the ledger no namespace, refusing REST writes of cluster-managed ones', async () => {
    const { crq, hrq, namespaces, puts } = fakes();
    expect(await crq.list()).toMatchObject({
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuotaList',
      metadata: {},
      items: [{ kind: 'ClusterResourceQuota' }],
    });
    expect(await hrq.list('org')).toEqual({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuotaList',
      metadata: {},
      items: [],
    });
    const { res, sent } = response();
    const body = {
      metadata: { resourceVersion: '3' },
      spec: { selector: { labels: { matchLabels: { tenant: 'acme' } } }, quota: { hard: { pods: '2' } } },
    };
    expect(await crq.put('acme', body, request, res)).toMatchObject({ kind: 'ClusterResourceQuota', metadata: { name: 'acme' } });
    expect(sent).toEqual({ status: 201, headers: { 'X-Ledger-Position': '7' } });
    expect(puts[0]).toMatchObject({
      definition: { ref: { kind: 'ClusterResourceQuota', name: 'acme' } },
      options: { actor: 'alice', expectedVersion: 3, unmanagedOnly: true },
    });
    await hrq.put('org', 'pods', { spec: { hard: { pods: '2' } } }, request, response().res);
    expect(puts[1]).toMatchObject({
      definition: { ref: { kind: 'HierarchicalResourceQuota', name: 'pods', namespace: 'org' } },
      options: { actor: 'alice', unmanagedOnly: true },
    });
    const ns = response();
    await namespaces.put('team-a', { metadata: { labels: { tenant: 'acme' } } }, request, ns.res);
    expect(puts[2]).toEqual({ definition: expect.objectContaining({ name: 'team-a' }), options: { actor: 'alice' } });
    expect(ns.sent.status).toBe(200);
  });

  it('never delete the namespaces NamespaceLifecycle keeps', async () => {
    const { namespaces } = fakes();
    expect(await failure(namespaces.delete('kube-system', request, response().res))).toMatchObject({
      code: 'Forbidden',
      details: { kind: 'namespaces', name: 'kube-system' },
    });
  });
});
