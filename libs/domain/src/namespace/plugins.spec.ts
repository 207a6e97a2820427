import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { fold } from '../events/fold.js';
import type { Operation, Pod } from '../kube/types.js';
import type { AdmitObject, AdmitResources } from '../namespace/commands.js';
import { decide } from '../namespace/decide.js';
import { emptyFacts, type NamespaceFacts } from '../namespace/facts.js';
import { DEFAULT_ADMISSION_PLUGINS, namespaceDeletionRefusal, pluginEnabled, type AdmissionPlugin } from './plugins.js';

/**
 * The admission plugins as ADMISSION_PLUGINS_ENABLE / _DISABLE choose them, through the
 * namespace decider: what each one does when it runs, what is left undone when it does not, and
 * kube-apiserver's fixed order whatever order they were enabled in.
 */
const T0 = Date.UTC(2026, 0, 1);
const NS = 'team-a';
const PODS = { group: '', resource: 'pods' };

const quota: LedgerEvent = { type: 'QuotaDefined', data: { name: 'compute', spec: { hard: { pods: '1', 'requests.cpu': '1' } } } };
const limits: LedgerEvent = {
  type: 'LimitRangeDefined',
  data: {
    name: 'limits',
    spec: { limits: [{ type: 'Container', max: { cpu: '1' }, default: { cpu: '500m' }, defaultRequest: { cpu: '250m' } }] },
  },
};
const namespaceObject: LedgerEvent = { type: 'NamespaceDefined', data: { name: NS, metadata: { uid: 'ns-uid', labels: { team: 'a' } } } };
const namespaceRemoved: LedgerEvent = { type: 'NamespaceRemoved', data: { name: NS } };

function facts(events: readonly LedgerEvent[], extra: Partial<NamespaceFacts> = {}): NamespaceFacts {
  const state = fold(events.map((event, i) => ({ ...event, version: i + 1, at: T0 + i })));
  return { ...emptyFacts(NS, T0 + 60_000, state), ...extra };
}

const pod = (name: string, cpu?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, uid: `uid-${name}`, resourceVersion: '7' },
  spec: { containers: [{ name: 'app', image: 'nginx', ...(cpu ? { resources: { requests: { cpu }, limits: { cpu } } } : {}) }] },
});

const admit = (
  object: Pod,
  plugins?: readonly AdmissionPlugin[],
  operation: Operation = 'CREATE',
  extra: Partial<AdmitObject> = {},
): AdmitObject => ({
  type: 'AdmitObject',
  request: {
    operation,
    groupResource: PODS,
    namespace: NS,
    name: object.metadata?.name ?? '',
    object,
    ...(operation === 'UPDATE' ? { oldObject: object } : {}),
  },
  reservationId: 'r-new',
  dryRun: false,
  ...(plugins ? { plugins } : {}),
  ...extra,
});

const without = (...disabled: AdmissionPlugin[]): AdmissionPlugin[] => DEFAULT_ADMISSION_PLUGINS.filter((p) => !disabled.includes(p));
const withAlwaysDeny: AdmissionPlugin[] = [...DEFAULT_ADMISSION_PLUGINS, 'AlwaysDeny'];

describe('which plugins run', () => {
  it('runs NamespaceLifecycle, LimitRanger and ResourceQuota when nothing says otherwise, not AlwaysDeny', () => {
    expect(
      ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota', 'AlwaysDeny'].map((p) => pluginEnabled(undefined, p as AdmissionPlugin)),
    ).toEqual([true, true, true, false]);
  });
});

describe('AlwaysDeny', () => {
  const denial = 'pods "web" is forbidden: admission control is denying all modifications';

  it('denies a pod that would fit, logging the decision and reserving nothing', () => {
    const { events, answer } = decide(admit(pod('web', '100m'), withAlwaysDeny), facts([quota]));
    expect(events).toEqual([]);
    expect(answer).toEqual({ kind: 'Decided', result: { allowed: false, code: 403, dryRun: false, message: denial, stage: 'AlwaysDeny' } });
  });

  it('denies before LimitRanger and ResourceQuota validate (it is a mutating plugin too): a pod over both gets its answer', () => {
    const { answer } = decide(admit(pod('web', '5'), withAlwaysDeny), facts([quota, limits]));
    expect(answer).toMatchObject({ result: { message: denial, stage: 'AlwaysDeny' } });
  });

  it('denies deletes too, and in namespaces the ledger does not manage (answered without a record)', () => {
    expect(decide(admit(pod('web'), withAlwaysDeny, 'DELETE'), facts([quota])).answer).toMatchObject({
      kind: 'Decided',
      result: { allowed: false, message: denial },
    });
    expect(decide(admit(pod('web'), withAlwaysDeny), facts([])).answer).toEqual({
      kind: 'Unmanaged',
      result: { allowed: false, code: 403, dryRun: false, message: denial, stage: 'AlwaysDeny' },
    });
  });

  it('denies a REST reservation of a resource list', () => {
    const command: AdmitResources = {
      type: 'AdmitResources',
      groupResource: { group: 'example.com', resource: 'widgets' },
      name: 'w1',
      resources: { 'example.com/gpu': '1' },
      reservationId: 'r',
      dryRun: false,
      plugins: withAlwaysDeny,
    };
    expect(decide(command, facts([quota])).answer).toMatchObject({
      result: { allowed: false, message: 'widgets.example.com "w1" is forbidden: admission control is denying all modifications' },
    });
  });

  it('still repeats the first answer to a request key that was answered before it was enabled', () => {
    const first = { allowed: true, code: 200, dryRun: false, reservationId: 'r-1' } as const;
    const repeated = decide(
      admit(pod('web', '100m'), withAlwaysDeny, 'CREATE', { requestKey: 'review:1', requestDigest: 'd' }),
      facts([quota], { answers: new Map([['review:1', { result: first, digest: 'd' }]]) }),
    );
    expect(repeated.answer).toEqual({ kind: 'Repeated', result: first });
  });
});

describe('LimitRanger disabled', () => {
  it('applies no defaults and no maximum: the pod is charged as it was sent', () => {
    const { events, answer } = decide(admit(pod('web', '900m'), without('LimitRanger')), facts([quota, limits]));
    expect(answer).toMatchObject({ kind: 'Decided', result: { allowed: true, charged: { 'requests.cpu': '900m', 'limits.cpu': '900m' } } });
    expect(answer).not.toHaveProperty('result.patch');
    expect(events).toHaveLength(1);
    // Enabled, the same LimitRange defaults a pod without resources ...
    expect(decide(admit(pod('bare')), facts([quota, limits])).answer).toMatchObject({
      result: { allowed: true, charged: { 'requests.cpu': '250m' }, patch: expect.any(Array) },
    });
    // ... and refuses one over its maximum, which runs disabled.
    expect(
      decide(admit(pod('big', '2')), facts([{ ...quota, data: { name: 'compute', spec: { hard: { pods: '5' } } } }, limits])).answer,
    ).toMatchObject({ result: { allowed: false, stage: 'LimitRanger' } });
    expect(decide(admit(pod('big', '2'), without('LimitRanger')), facts([limits])).answer).toMatchObject({ result: { allowed: true } });
  });
});

describe('ResourceQuota disabled', () => {
  it('admits a pod over the quota, charging nothing and reserving nothing, and still logs the decision', () => {
    const { events, answer } = decide(admit(pod('web', '5'), without('ResourceQuota')), facts([quota]));
    expect(events).toEqual([]);
    expect(answer).toEqual({ kind: 'Decided', result: { allowed: true, code: 200, dryRun: false } });
  });

  it('keeps LimitRanger: its defaults are still the answer', () => {
    const { events, answer } = decide(admit(pod('bare'), without('ResourceQuota')), facts([quota, limits]));
    expect(events).toEqual([]);
    expect(answer).toMatchObject({ result: { allowed: true, patch: expect.arrayContaining([expect.objectContaining({ op: 'add' })]) } });
  });

  it('admits a REST reservation of a resource list over the quota without reserving it', () => {
    const command: AdmitResources = {
      type: 'AdmitResources',
      groupResource: { group: '', resource: 'pods' },
      resources: { pods: '9' },
      reservationId: 'r',
      dryRun: false,
      plugins: without('ResourceQuota'),
    };
    const { events, answer } = decide(command, facts([quota]));
    expect(events).toEqual([]);
    expect(answer).toEqual({ kind: 'Decided', result: { allowed: true, code: 200, dryRun: false } });
  });
});

describe('NamespaceLifecycle', () => {
  const terminating = 'pods "web" is forbidden: unable to create new content in namespace team-a because it is being terminated';

  it('refuses new content in a namespace whose Namespace object the ledger recorded as deleted', () => {
    const { events, answer } = decide(admit(pod('web', '100m')), facts([namespaceObject, namespaceRemoved]));
    expect(events).toEqual([]);
    expect(answer).toEqual({
      kind: 'Unmanaged',
      result: { allowed: false, code: 403, dryRun: false, message: terminating, stage: 'NamespaceLifecycle' },
    });
  });

  it('refuses it in a namespace with quotas too, with the decision logged, and admits again once a Namespace object is defined anew', () => {
    const { events, answer } = decide(admit(pod('web', '100m')), facts([quota, namespaceObject, namespaceRemoved]));
    expect(events).toEqual([]);
    expect(answer).toMatchObject({
      kind: 'Decided',
      result: { allowed: false, code: 403, message: terminating, stage: 'NamespaceLifecycle' },
    });
    const recreated = decide(admit(pod('web', '100m')), facts([quota, namespaceObject, namespaceRemoved, namespaceObject]));
    expect(recreated.answer).toMatchObject({ kind: 'Decided', result: { allowed: true } });
  });

  it("leaves a webhook's review to the kube-apiserver's own NamespaceLifecycle: a namespace deleted and created again is active before the ledger reads it back", () => {
    const webhook = { source: 'webhook' as const };
    expect(decide(admit(pod('web', '100m'), undefined, 'CREATE', webhook), facts([namespaceObject, namespaceRemoved])).answer).toEqual({
      kind: 'Unmanaged',
      result: { allowed: true, code: 200, dryRun: false },
    });
    const { events, answer } = decide(
      admit(pod('web', '100m'), undefined, 'CREATE', webhook),
      facts([{ ...quota, data: { name: 'compute', spec: { hard: { pods: '5' } } } }, namespaceObject, namespaceRemoved]),
    );
    expect(answer).toMatchObject({ kind: 'Decided', result: { allowed: true, charged: { pods: '1' } } });
    expect(events).toMatchObject([{ type: 'Reserved' }]);
    // A REST caller still meets the ledger's NamespaceLifecycle there.
    expect(
      decide(admit(pod('web', '100m'), undefined, 'CREATE', { source: 'rest' }), facts([namespaceObject, namespaceRemoved])).answer,
    ).toMatchObject({ result: { allowed: false, stage: 'NamespaceLifecycle' } });
  });

  it('lets updates and deletes through there, as a terminating namespace does (finalizers are removed by updates)', () => {
    expect(decide(admit(pod('web', '100m'), undefined, 'UPDATE'), facts([namespaceObject, namespaceRemoved])).answer).toMatchObject({
      result: { allowed: true },
    });
    expect(decide(admit(pod('web'), undefined, 'DELETE'), facts([namespaceObject, namespaceRemoved])).answer).toMatchObject({
      result: { allowed: true },
    });
  });

  it('runs before AlwaysDeny, and not at all when disabled', () => {
    expect(decide(admit(pod('web'), withAlwaysDeny), facts([namespaceObject, namespaceRemoved])).answer).toMatchObject({
      result: { stage: 'NamespaceLifecycle' },
    });
    expect(decide(admit(pod('web'), without('NamespaceLifecycle')), facts([namespaceObject, namespaceRemoved])).answer).toEqual({
      kind: 'Unmanaged',
      result: { allowed: true, code: 200, dryRun: false },
    });
  });

  it('admits where the Namespace object exists, and where the ledger never knew it (as before: unmanaged)', () => {
    expect(decide(admit(pod('web')), facts([namespaceObject])).answer).toEqual({
      kind: 'Unmanaged',
      result: { allowed: true, code: 200, dryRun: false },
    });
    expect(decide(admit(pod('web')), facts([])).answer).toEqual({ kind: 'Unmanaged', result: { allowed: true, code: 200, dryRun: false } });
  });

  it.each([
    ['default', 'namespaces "default" is forbidden: this namespace may not be deleted'],
    ['kube-system', 'namespaces "kube-system" is forbidden: this namespace may not be deleted'],
    ['kube-public', 'namespaces "kube-public" is forbidden: this namespace may not be deleted'],
    ['team-a', undefined],
  ])('never deletes the namespace %s', (name, refusal) => {
    expect(namespaceDeletionRefusal(name, undefined)).toBe(refusal);
    expect(namespaceDeletionRefusal(name, without('NamespaceLifecycle'))).toBeUndefined();
  });
});
