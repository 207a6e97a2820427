import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { labelSelectorMatches, parseLabelSelector } from '@quota/domain';
import { labelSelectorString } from './format/describe.js';
import {
  COUNT_MATCH_CONDITIONS,
  MUTATE_PATH,
  VALIDATE_PATH,
  toYaml,
  webhookConfiguration,
  type LabelSelector,
  type LabelSelectorRequirement,
  type RuleWithOperations,
} from './webhook-config.js';

// Not a real certificate: the generator only checks the PEM armour, never the DER inside.
const CA = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUexampleexampleexample\n-----END CERTIFICATE-----\n';
const service = { namespace: 'quota-ledger', name: 'quota-ledger' };

function resourcesOf(rules: readonly RuleWithOperations[], group: string): string[] {
  return rules.filter((r) => r.apiGroups.includes(group)).flatMap((r) => r.resources);
}

describe('webhookConfiguration', () => {
  it('returns a mutating and a validating configuration of admissionregistration.k8s.io/v1', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service });
    expect(mutating).toMatchObject({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'quota-ledger' },
    });
    expect(validating).toMatchObject({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'quota-ledger' },
    });
    expect(mutating.webhooks.map((w) => w.name)).toEqual(['mutate.quota-ledger.io', 'mutate-definitions.quota-ledger.io']);
    expect(validating.webhooks.map((w) => w.name)).toEqual([
      'validate.quota-ledger.io',
      'validate-count.quota-ledger.io',
      'validate-namespaces.quota-ledger.io',
      'validate-unmanaged-namespaces.quota-ledger.io',
    ]);
    // --namespaces all: every namespace sent, the Namespaces' writes to one webhook, as before the label.
    expect(webhookConfiguration({ caBundlePem: CA, service, namespaces: 'all' })[1].webhooks.map((w) => w.name)).toEqual([
      'validate.quota-ledger.io',
      'validate-count.quota-ledger.io',
      'validate-namespaces.quota-ledger.io',
    ]);
    expect(() => webhookConfiguration({ caBundlePem: CA, service, namespaces: 'some' as 'all' })).toThrow(
      /namespaces must be managed or all/,
    );
  });

  it('sends only the namespaces labelled quota-ledger.io/managed by default, and every one with namespaces: all', () => {
    const sent = (options: { namespaces?: 'managed' | 'all' }, labels: Record<string, string>) => {
      const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service, ...options });
      return [...mutating.webhooks, ...validating.webhooks]
        .filter((w) => labelSelectorMatches(w.namespaceSelector, labels))
        .map((w) => w.name);
    };
    const plain = { 'kubernetes.io/metadata.name': 'team-a' };
    const managed = { ...plain, 'quota-ledger.io/managed': 'true' };
    const everything = [
      'mutate.quota-ledger.io',
      'mutate-definitions.quota-ledger.io',
      'validate.quota-ledger.io',
      'validate-count.quota-ledger.io',
      'validate-namespaces.quota-ledger.io',
    ];
    expect(sent({}, managed)).toEqual([...everything, 'validate-unmanaged-namespaces.quota-ledger.io']);
    // A namespace no quota covers: only its definitions' author stamp and its Namespace's own writes.
    expect(sent({}, plain)).toEqual([
      'mutate-definitions.quota-ledger.io',
      'validate-namespaces.quota-ledger.io',
      'validate-unmanaged-namespaces.quota-ledger.io',
    ]);
    expect(sent({ namespaces: 'all' }, plain)).toEqual(everything);
    // A Namespace's own writes: by its labels, old or new. Managed ones under Fail, the others under Ignore.
    const [, validating] = webhookConfiguration({ caBundlePem: CA, service });
    const forNamespace = (labels: Record<string, string>) =>
      validating.webhooks.filter(
        (w) => w.rules.some((r) => r.resources.includes('namespaces')) && labelSelectorMatches(w.objectSelector, labels),
      );
    expect(forNamespace(managed).map((w) => [w.name, w.failurePolicy])).toEqual([['validate-namespaces.quota-ledger.io', 'Fail']]);
    expect(forNamespace(plain).map((w) => [w.name, w.failurePolicy])).toEqual([
      ['validate-unmanaged-namespaces.quota-ledger.io', 'Ignore'],
    ]);
  });

  it('sends what quota only counts to a webhook of its own, Ignore by default, and what it charges under Fail', () => {
    const [mutating, validating] = webhookConfiguration({
      caBundlePem: CA,
      service,
      customResources: [{ kind: 'Widget', apiVersion: 'example.com/v1', groupResource: { group: 'example.com', resource: 'widgets' } }],
    });
    const [charged, counted] = validating.webhooks;
    expect([mutating.webhooks[0]?.failurePolicy, charged?.failurePolicy, counted?.failurePolicy]).toEqual(['Fail', 'Fail', 'Ignore']);
    expect(resourcesOf(charged?.rules ?? [], '')).toEqual([
      'pods',
      'pods/resize',
      'persistentvolumeclaims',
      'persistentvolumeclaims/status',
      'services',
    ]);
    expect(resourcesOf(charged?.rules ?? [], 'resource.k8s.io')).toEqual(['resourceclaims']);
    // Every kind's CREATE, then the count-only kinds' DELETE (and the custom resources named).
    expect(counted?.rules[0]).toEqual({
      apiGroups: ['*'],
      apiVersions: ['*'],
      resources: ['*'],
      operations: ['CREATE'],
      scope: 'Namespaced',
    });
    const deletes = counted?.rules.slice(1) ?? [];
    expect(deletes.every((r) => r.operations.join() === 'DELETE')).toBe(true);
    expect(resourcesOf(deletes, '')).toEqual(['configmaps', 'secrets', 'replicationcontrollers', 'serviceaccounts']);
    expect(resourcesOf(deletes, 'apps')).toEqual(['deployments', 'replicasets', 'statefulsets', 'daemonsets']);
    expect(resourcesOf(deletes, 'batch')).toEqual(['jobs', 'cronjobs']);
    expect(resourcesOf(deletes, 'example.com')).toEqual(['widgets']);
    // The same route and everything else alike: only the kinds, their conditions and the policy differ.
    const bare = { name: '', rules: [], failurePolicy: '', matchConditions: [] };
    expect({ ...counted, ...bare }).toEqual({ ...charged, ...bare });
  });

  it("gives the count webhook alone the condition that leaves out of every kind's CREATE what it must not count", () => {
    const [, validating] = webhookConfiguration({ caBundlePem: CA, service });
    expect(validating.webhooks.map((w) => w.matchConditions)).toEqual([undefined, COUNT_MATCH_CONDITIONS, undefined, undefined]);
  });

  it('takes each failure policy on its own', () => {
    const policies = (options: { failurePolicy?: 'Fail' | 'Ignore'; countFailurePolicy?: 'Fail' | 'Ignore' }) => {
      const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service, ...options });
      return [...mutating.webhooks, ...validating.webhooks].map((w) => w.failurePolicy);
    };
    // mutate, mutate-definitions; validate, validate-count, validate-namespaces, validate-unmanaged-namespaces (always Ignore).
    expect(policies({ countFailurePolicy: 'Fail' })).toEqual(['Fail', 'Fail', 'Fail', 'Fail', 'Fail', 'Ignore']);
    expect(policies({ failurePolicy: 'Ignore' })).toEqual(['Ignore', 'Ignore', 'Ignore', 'Ignore', 'Ignore', 'Ignore']);
    expect(policies({ failurePolicy: 'Ignore', countFailurePolicy: 'Fail' })).toEqual([
      'Ignore',
      'Ignore',
      'Ignore',
      'Fail',
      'Ignore',
      'Ignore',
    ]);
    expect(() => policies({ countFailurePolicy: 'Sometimes' as 'Fail' })).toThrow(/countFailurePolicy must be Fail or Ignore/);
  });

  it('encodes the CA bundle in base64', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service });
    for (const webhook of [...mutating.webhooks, ...validating.webhooks]) {
      expect(webhook.clientConfig.caBundle).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8')).toBe(CA);
    }
  });

  it('points a service reference at the mutate and validate paths on port 443 by default', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service });
    expect(mutating.webhooks[0]?.clientConfig.service).toEqual({
      namespace: 'quota-ledger',
      name: 'quota-ledger',
      path: MUTATE_PATH,
      port: 443,
    });
    expect(validating.webhooks[0]?.clientConfig.service).toEqual({
      namespace: 'quota-ledger',
      name: 'quota-ledger',
      path: VALIDATE_PATH,
      port: 443,
    });
    expect(mutating.webhooks[0]?.clientConfig.url).toBeUndefined();
  });

  it('keeps the service port it is given', () => {
    const [, validating] = webhookConfiguration({ caBundlePem: CA, service: { ...service, port: 8443 } });
    expect(validating.webhooks[0]?.clientConfig.service?.port).toBe(8443);
  });

  it('appends the paths to an https url, without a doubled slash', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, url: 'https://quota.example.com:8443/' });
    expect(mutating.webhooks[0]?.clientConfig.url).toBe('https://quota.example.com:8443/v1/admission/mutate');
    expect(validating.webhooks[0]?.clientConfig.url).toBe('https://quota.example.com:8443/v1/admission/validate');
    expect(validating.webhooks[0]?.clientConfig.service).toBeUndefined();
  });

  it('refuses a plain http url', () => {
    expect(() => webhookConfiguration({ caBundlePem: CA, url: 'http://quota.example.com' })).toThrow(/must use https/);
  });

  it('refuses a url with a query, a fragment or user info', () => {
    expect(() => webhookConfiguration({ caBundlePem: CA, url: 'https://quota.example.com/?x=1' })).toThrow(/query or a fragment/);
    expect(() => webhookConfiguration({ caBundlePem: CA, url: 'https://quota.example.com/#x' })).toThrow(/query or a fragment/);
    expect(() => webhookConfiguration({ caBundlePem: CA, url: 'https://user:pw@quota.example.com/' })).toThrow(/user info/);
  });

  it('refuses something that is not a url', () => {
    expect(() => webhookConfiguration({ caBundlePem: CA, url: 'quota.example.com' })).toThrow(/not a URL/);
  });

  it('refuses both a url and a service, and neither', () => {
    const both = { caBundlePem: CA, url: 'https://quota.example.com', service } as unknown as Parameters<typeof webhookConfiguration>[0];
    const neither = { caBundlePem: CA } as unknown as Parameters<typeof webhookConfiguration>[0];
    expect(() => webhookConfiguration(both)).toThrow(/either url or service/);
    expect(() => webhookConfiguration(neither)).toThrow(/either url or service/);
  });

  it('refuses a CA bundle without a PEM certificate', () => {
    expect(() => webhookConfiguration({ caBundlePem: Buffer.from(CA).toString('base64'), service })).toThrow(/BEGIN CERTIFICATE/);
    expect(() => webhookConfiguration({ caBundlePem: '', service })).toThrow(/BEGIN CERTIFICATE/);
  });

  it('refuses a CA bundle that carries a private key', () => {
    const withKey = `${CA}-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIexample\n-----END PRIVATE KEY-----\n`;
    expect(() => webhookConfiguration({ caBundlePem: withKey, service })).toThrow(/private key/);
  });

  it.each([0, 31, -1, 2.5, Number.NaN])('refuses timeoutSeconds %s', (timeoutSeconds) => {
    expect(() => webhookConfiguration({ caBundlePem: CA, service, timeoutSeconds })).toThrow(
      /timeoutSeconds must be a whole number from 1 to 30/,
    );
  });

  it('uses a 10 second timeout by default and accepts 1 and 30', () => {
    expect(webhookConfiguration({ caBundlePem: CA, service })[1].webhooks[0]?.timeoutSeconds).toBe(10);
    expect(webhookConfiguration({ caBundlePem: CA, service, timeoutSeconds: 1 })[1].webhooks[0]?.timeoutSeconds).toBe(1);
    expect(webhookConfiguration({ caBundlePem: CA, service, timeoutSeconds: 30 })[0].webhooks[0]?.timeoutSeconds).toBe(30);
  });

  it('fails closed by default and lets the caller choose Ignore', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service });
    expect(mutating.webhooks[0]?.failurePolicy).toBe('Fail');
    expect(validating.webhooks[0]?.failurePolicy).toBe('Fail');
    const [m2, v2] = webhookConfiguration({ caBundlePem: CA, service, failurePolicy: 'Ignore' });
    expect(m2.webhooks[0]?.failurePolicy).toBe('Ignore');
    expect(v2.webhooks[0]?.failurePolicy).toBe('Ignore');
  });

  it('refuses an unknown failure policy', () => {
    expect(() => webhookConfiguration({ caBundlePem: CA, service, failurePolicy: 'fail' as 'Fail' })).toThrow(/Fail or Ignore/);
  });

  it('excludes kube-system and the namespace of the service by default', () => {
    const [mutating, validating] = webhookConfiguration({
      caBundlePem: CA,
      service: { namespace: 'platform', name: 'ql' },
      namespaces: 'all',
    });
    const expected = { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'platform'] }] };
    for (const webhook of [...mutating.webhooks, ...validating.webhooks]) expect(webhook.namespaceSelector).toEqual(expected);
    const [managed] = webhookConfiguration({ caBundlePem: CA, service: { namespace: 'platform', name: 'ql' } });
    expect(managed.webhooks[0]?.namespaceSelector).toEqual({
      matchExpressions: [...expected.matchExpressions, { key: 'quota-ledger.io/managed', operator: 'Exists' }],
    });
  });

  it('excludes the quota-ledger namespace when the API is reached by url', () => {
    const [, validating] = webhookConfiguration({ caBundlePem: CA, url: 'https://quota.example.com' });
    expect(validating.webhooks[0]?.namespaceSelector.matchExpressions?.[0]?.values).toEqual(['kube-system', 'quota-ledger']);
  });

  it('narrows to the namespace selector it is given, still excluding kube-system and its own namespace', () => {
    const namespaceSelector: LabelSelector = {
      matchLabels: { 'quota-ledger.io/enforce': 'true' },
      matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['cache'] }],
    };
    const [mutating, validating] = webhookConfiguration({
      caBundlePem: CA,
      service: { namespace: 'platform', name: 'ql' },
      namespaceSelector,
      namespaces: 'all',
    });
    const expected = {
      matchLabels: { 'quota-ledger.io/enforce': 'true' },
      matchExpressions: [
        { key: 'tier', operator: 'NotIn', values: ['cache'] },
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'platform'] },
      ],
    };
    expect(mutating.webhooks[0]?.namespaceSelector).toEqual(expected);
    expect(validating.webhooks[0]?.namespaceSelector).toEqual(expected);
    // A selector that would pick kube-system by its name cannot: requirements are ANDed.
    const greedy = webhookConfiguration({
      caBundlePem: CA,
      service,
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
    })[1];
    expect(labelSelectorMatches(greedy.webhooks[0]?.namespaceSelector, { 'kubernetes.io/metadata.name': 'kube-system' })).toBe(false);
  });

  it('sends every object by default, and only the selected ones with an object selector, on both webhooks', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service });
    expect(mutating.webhooks[0]?.objectSelector).toEqual({});
    expect(validating.webhooks[0]?.objectSelector).toEqual({});
    const objectSelector: LabelSelector = { matchExpressions: [{ key: 'quota-ledger.io/skip', operator: 'DoesNotExist' }] };
    const [m2, v2] = webhookConfiguration({ caBundlePem: CA, service, objectSelector });
    expect(m2.webhooks[0]?.objectSelector).toEqual(objectSelector);
    expect(v2.webhooks[0]?.objectSelector).toEqual(objectSelector);
    // The Namespaces' webhooks add the managed label's requirement to it.
    expect(v2.webhooks[2]?.objectSelector).toEqual({
      matchExpressions: [...(objectSelector.matchExpressions ?? []), { key: 'quota-ledger.io/managed', operator: 'Exists' }],
    });
  });

  it.each<readonly [string, 'namespaceSelector' | 'objectSelector', LabelSelector, RegExp]>([
    [
      'an In without values',
      'namespaceSelector',
      { matchExpressions: [{ key: 'env', operator: 'In' }] },
      /namespaceSelector\.matchExpressions\[0\]\.values: Required value/,
    ],
    [
      'a key that is no label key',
      'objectSelector',
      { matchLabels: { '-env': 'prod' } },
      /objectSelector\.matchLabels: Invalid value: "-env"/,
    ],
    [
      'an unknown operator',
      'objectSelector',
      { matchExpressions: [{ key: 'env', operator: 'Equals' as LabelSelectorRequirement['operator'], values: ['x'] }] },
      /objectSelector\.matchExpressions\[0\]\.operator/,
    ],
  ])('refuses %s in the %s, naming the field', (_name, option, selector, message) => {
    expect(() => webhookConfiguration({ caBundlePem: CA, service, [option]: selector })).toThrow(message);
  });

  it('takes a selector as kubectl prints it back as one selecting the same labels (parse of the printed form)', () => {
    const key = fc.constantFrom('env', 'team', 'example.com/tier');
    const value = fc.constantFrom('', 'a', 'b', 'prod');
    const requirement: fc.Arbitrary<LabelSelectorRequirement> = fc.oneof(
      fc.record({
        key,
        operator: fc.constantFrom('In' as const, 'NotIn' as const),
        // Kubernetes prints a set of only the empty value as `in ()`, which its own parser refuses.
        values: fc.uniqueArray(value, { minLength: 1, maxLength: 3 }).filter((vs) => vs.join('') !== ''),
      }),
      fc.record({ key, operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) }),
    );
    const selector = fc.record({ matchLabels: fc.dictionary(key, value), matchExpressions: fc.array(requirement, { maxLength: 3 }) });
    fc.assert(
      fc.property(selector, fc.dictionary(key, value), (original, labels) => {
        const parsed = parseLabelSelector(labelSelectorString(original));
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(labelSelectorMatches(parsed.selector, labels)).toBe(labelSelectorMatches(original, labels));
      }),
    );
  });

  it('gives the webhooks fully qualified names', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service });
    expect(mutating.webhooks[0]?.name).toBe('mutate.quota-ledger.io');
    expect(validating.webhooks[0]?.name).toBe('validate.quota-ledger.io');
  });

  it('names the configurations and their webhooks after the name option', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service, name: 'ql-staging' });
    expect(mutating.metadata.name).toBe('ql-staging');
    expect(validating.metadata.name).toBe('ql-staging');
    // kube-apiserver wants a fully qualified webhook name: at least three DNS segments.
    expect(mutating.webhooks[0]?.name.split('.').length).toBeGreaterThanOrEqual(3);
    expect(mutating.webhooks[0]?.name).not.toBe(validating.webhooks[0]?.name);
    expect(() => webhookConfiguration({ caBundlePem: CA, service, name: 'Quota_Ledger' })).toThrow(/DNS label/);
  });

  it('declares v1 reviews, Equivalent matching, side effects, and reinvokes the mutating hook when a later mutator changed the object', () => {
    const [mutating, validating] = webhookConfiguration({ caBundlePem: CA, service });
    expect(mutating.webhooks[0]).toMatchObject({
      admissionReviewVersions: ['v1'],
      matchPolicy: 'Equivalent',
      sideEffects: 'None',
      reinvocationPolicy: 'IfNeeded',
    });
    expect(validating.webhooks[0]).toMatchObject({
      admissionReviewVersions: ['v1'],
      matchPolicy: 'Equivalent',
      sideEffects: 'NoneOnDryRun',
    });
    expect(validating.webhooks[0]).not.toHaveProperty('reinvocationPolicy');
  });

  it('mutates only pods and claims (LimitRange defaults), and LimitRanges and Ledger*Quotas (their author), on CREATE and UPDATE', () => {
    const rules = webhookConfiguration({ caBundlePem: CA, service })[0].webhooks.flatMap((w) => w.rules);
    expect(rules.map((r) => [r.apiGroups, [...r.resources].sort()])).toEqual([
      [[''], ['persistentvolumeclaims', 'pods']],
      [[''], ['limitranges']],
      [['quota-ledger.io'], ['ledgerhierarchicalquotas', 'ledgerquotas']],
      [['quota-ledger.io'], ['ledgerclusterquotas']],
    ]);
    expect(rules.map((r) => r.scope)).toEqual(['Namespaced', 'Namespaced', 'Namespaced', 'Cluster']);
    expect(new Set(rules.flatMap((r) => r.operations))).toEqual(new Set(['CREATE', 'UPDATE']));
  });

  it('validates the charged kinds on CREATE, UPDATE and DELETE, every other kind on CREATE, but not ResourceQuota objects', () => {
    const [charged, counted] = webhookConfiguration({ caBundlePem: CA, service })[1].webhooks;
    const rules = charged?.rules ?? [];
    expect(resourcesOf(rules, '')).toEqual(expect.arrayContaining(['pods', 'services', 'persistentvolumeclaims']));
    expect(resourcesOf(rules, 'resource.k8s.io')).toEqual(['resourceclaims']);
    for (const r of rules) expect([r.operations, r.scope]).toEqual([['CREATE', 'UPDATE', 'DELETE'], 'Namespaced']);
    const named = (counted?.rules ?? []).flatMap((r) => r.resources);
    expect(named).not.toContain('resourcequotas');
    expect(counted?.matchConditions?.[0]?.expression).toContain("'/resourcequotas'");
    for (const r of counted?.rules ?? []) expect(r.scope).toBe('Namespaced');
  });

  it('sends the Namespaces themselves, cluster-scoped and alone in their rule, so the ledger records their labels', () => {
    const namespaces = {
      apiGroups: [''],
      apiVersions: ['*'],
      resources: ['namespaces'],
      operations: ['CREATE', 'UPDATE', 'DELETE'],
      scope: 'Cluster',
    };
    const [, validating] = webhookConfiguration({ caBundlePem: CA, service });
    expect(validating.webhooks.map((w) => w.rules.filter((r) => r.scope === 'Cluster'))).toEqual([[], [], [namespaces], [namespaces]]);
  });

  it('validates the subresource writes quota charges: pod resize and claim status', () => {
    const rules = webhookConfiguration({ caBundlePem: CA, service })[1].webhooks[0]?.rules ?? [];
    expect(resourcesOf(rules, '')).toEqual(expect.arrayContaining(['pods/resize', 'persistentvolumeclaims/status']));
  });
});

describe('toYaml', () => {
  it('joins the documents with --- and parses back to the same objects', () => {
    const docs = webhookConfiguration({ caBundlePem: CA, service });
    const text = toYaml(docs);
    expect(text.match(/^---$/gm)).toHaveLength(1);
    const parsed = parseAllDocuments(text).map((d) => d.toJS() as unknown);
    expect(parsed).toEqual(JSON.parse(JSON.stringify(docs)));
  });

  it('keeps the caBundle on one line', () => {
    const text = toYaml(webhookConfiguration({ caBundlePem: CA.repeat(20), service }));
    expect(text).toMatch(/^\s+caBundle: [A-Za-z0-9+/]+=*$/m);
  });

  it('writes an empty stream for no documents', () => {
    expect(toYaml([])).toBe('');
  });
});
