import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

/** Files from memory: the specs read no disk. */
const files =
  (contents: Record<string, string>) =>
  (path: string): string => {
    const text = contents[path];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return text;
  };

const admissionOf = (env: Record<string, string>, contents: Record<string, string> = {}) => loadConfig(env, files(contents)).admission;

const refusal = (env: Record<string, string>, contents: Record<string, string> = {}): string => {
  try {
    loadConfig(env, files(contents));
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the configuration was accepted');
};

/** An AdmissionConfiguration whose ResourceQuota plugin has this embedded configuration (indented YAML lines). */
const admissionFile = (configuration: string) =>
  [
    'apiVersion: apiserver.config.k8s.io/v1',
    'kind: AdmissionConfiguration',
    'plugins:',
    '  - name: ResourceQuota',
    '    configuration:',
    configuration,
    '',
  ].join('\n');

/** kube-apiserver's documented example: pods of the cluster-services priority class need a covering quota. */
const PRIORITY_CLASS_LIMIT = admissionFile(`      apiVersion: apiserver.config.k8s.io/v1
      kind: ResourceQuotaConfiguration
      limitedResources:
        - resource: pods
          matchScopes:
            - scopeName: PriorityClass
              operator: In
              values: ["cluster-services"]`);

const withLimited = (limitedResources: string) =>
  admissionFile(`      apiVersion: resourcequota.admission.k8s.io/v1beta1
      kind: Configuration
      limitedResources:
${limitedResources}`);

describe('admission plugins (ADMISSION_PLUGINS_ENABLE / ADMISSION_PLUGINS_DISABLE)', () => {
  it.each([
    ['nothing set: the defaults', {}, ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota']],
    [
      'AlwaysDeny enabled runs last',
      { ADMISSION_PLUGINS_ENABLE: 'AlwaysDeny' },
      ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota', 'AlwaysDeny'],
    ],
    ['ResourceQuota disabled', { ADMISSION_PLUGINS_DISABLE: 'ResourceQuota' }, ['NamespaceLifecycle', 'LimitRanger']],
    [
      'the order of the list does not matter: Kubernetes order',
      { ADMISSION_PLUGINS_ENABLE: 'AlwaysDeny,ResourceQuota,LimitRanger,NamespaceLifecycle' },
      ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota', 'AlwaysDeny'],
    ],
    ['spaces and empty items are ignored', { ADMISSION_PLUGINS_DISABLE: ' LimitRanger , ,NamespaceLifecycle,' }, ['ResourceQuota']],
    ['everything disabled', { ADMISSION_PLUGINS_DISABLE: 'NamespaceLifecycle,LimitRanger,ResourceQuota' }, []],
  ])('%s', (_name, env, plugins) => {
    expect(admissionOf(env).plugins).toEqual(plugins);
  });

  it.each([
    [
      { ADMISSION_PLUGINS_ENABLE: 'PodSecurity' },
      'invalid configuration: ADMISSION_PLUGINS_ENABLE: plugin "PodSecurity" is unknown (known: NamespaceLifecycle, LimitRanger, ResourceQuota, AlwaysDeny)',
    ],
    [{ ADMISSION_PLUGINS_DISABLE: 'resourcequota' }, 'invalid configuration: ADMISSION_PLUGINS_DISABLE: plugin "resourcequota" is unknown'],
    [
      { ADMISSION_PLUGINS_ENABLE: 'AlwaysDeny,ResourceQuota', ADMISSION_PLUGINS_DISABLE: 'ResourceQuota' },
      'invalid configuration: ADMISSION_PLUGINS_DISABLE: ResourceQuota also in ADMISSION_PLUGINS_ENABLE: a plugin is either enabled or disabled',
    ],
  ])('refuses %o, naming the variable and the value', (env, message) => {
    expect(refusal(env)).toContain(message);
  });
});

describe('the admission configuration file (ADMISSION_CONFIG_FILE)', () => {
  it("reads kube-apiserver's AdmissionConfiguration with an embedded ResourceQuota configuration", () => {
    expect(admissionOf({ ADMISSION_CONFIG_FILE: '/etc/ql/admission.yaml' }, { '/etc/ql/admission.yaml': PRIORITY_CLASS_LIMIT })).toEqual({
      plugins: ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota'],
      configFile: '/etc/ql/admission.yaml',
      limitedResources: [{ resource: 'pods', matchScopes: [{ scopeName: 'PriorityClass', operator: 'In', values: ['cluster-services'] }] }],
    });
  });

  it('reads a plugin configuration from `path`, relative to the file, in JSON', () => {
    const admission = JSON.stringify({
      apiVersion: 'apiserver.k8s.io/v1alpha1',
      kind: 'AdmissionConfiguration',
      plugins: [{ name: 'LimitRanger' }, { name: 'ResourceQuota', path: 'quota/resourcequota.json' }],
    });
    const quota = JSON.stringify({
      apiVersion: 'resourcequota.admission.k8s.io/v1',
      kind: 'Configuration',
      limitedResources: [
        { apiGroup: '', resource: 'pods', matchContains: ['requests.cpu'] },
        { apiGroup: 'apps', resource: 'deployments', matchContains: ['count/deployments.apps'] },
      ],
    });
    const read = { '/etc/ql/admission.json': admission, '/etc/ql/quota/resourcequota.json': quota };
    expect(admissionOf({ ADMISSION_CONFIG_FILE: '/etc/ql/admission.json' }, read).limitedResources).toEqual([
      { resource: 'pods', matchContains: ['requests.cpu'] },
      { apiGroup: 'apps', resource: 'deployments', matchContains: ['count/deployments.apps'] },
    ]);
  });

  it('keeps the configuration of a plugin that is disabled, as kube-apiserver does (it is not used)', () => {
    const admission = admissionOf(
      { ADMISSION_CONFIG_FILE: '/a.yaml', ADMISSION_PLUGINS_DISABLE: 'ResourceQuota' },
      { '/a.yaml': PRIORITY_CLASS_LIMIT },
    );
    expect(admission.plugins).toEqual(['NamespaceLifecycle', 'LimitRanger']);
    expect(admission.limitedResources).toHaveLength(1);
  });

  it('accepts a ResourceQuota plugin without configuration, and no plugins at all', () => {
    const bare = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: ResourceQuota}]\n';
    expect(admissionOf({ ADMISSION_CONFIG_FILE: '/a.yaml' }, { '/a.yaml': bare }).limitedResources).toEqual([]);
    expect(
      admissionOf(
        { ADMISSION_CONFIG_FILE: '/a.yaml' },
        { '/a.yaml': 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n' },
      ).limitedResources,
    ).toEqual([]);
  });

  const limited = (entries: string) => ({ '/x.yaml': withLimited(entries) });

  it.each([
    [
      'an operator scope selectors do not have',
      limited(
        '        - resource: pods\n        - resource: pods\n          matchScopes:\n            - scopeName: PriorityClass\n              operator: Equals\n              values: [a]',
      ),
      'ADMISSION_CONFIG_FILE: /x.yaml: plugins[0].configuration.limitedResources[1].matchScopes[0].operator: must be In, NotIn, Exists or DoesNotExist, got "Equals"',
    ],
    [
      'In without values',
      limited('        - resource: pods\n          matchScopes: [{scopeName: PriorityClass, operator: In}]'),
      'plugins[0].configuration.limitedResources[0].matchScopes[0].values: must be at least one value when operator is In',
    ],
    [
      'Exists with values',
      limited('        - resource: pods\n          matchScopes: [{scopeName: BestEffort, operator: Exists, values: [x]}]'),
      'plugins[0].configuration.limitedResources[0].matchScopes[0].values: must be empty when operator is Exists',
    ],
    [
      'an unknown scope',
      limited('        - resource: pods\n          matchScopes: [{scopeName: Gold, operator: Exists}]'),
      'limitedResources[0].matchScopes[0].scopeName: unsupported scope "Gold"',
    ],
    [
      'an entry without a resource',
      limited('        - matchContains: [cpu]'),
      'plugins[0].configuration.limitedResources[0].resource: Required value',
    ],
    [
      'a misspelt field',
      limited('        - resource: pods\n          matchContain: [cpu]'),
      'plugins[0].configuration.limitedResources[0].matchContain: unknown field',
    ],
    [
      'matchContains that is not a list',
      limited('        - resource: pods\n          matchContains: cpu'),
      'limitedResources[0].matchContains: must be a list',
    ],
    [
      'an unknown plugin',
      {
        '/x.yaml':
          'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: ResourceQuota}, {name: PodSecurity, path: pod-security.yaml}]\n',
      },
      'plugins[1].name: unsupported plugin "PodSecurity": this service runs NamespaceLifecycle, LimitRanger, ResourceQuota, AlwaysDeny',
    ],
    [
      'a plugin named twice',
      {
        '/x.yaml':
          'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: ResourceQuota}, {name: ResourceQuota}]\n',
      },
      'plugins[1].name: Duplicate value: "ResourceQuota"',
    ],
    [
      'a configuration for a plugin that takes none',
      {
        '/x.yaml':
          'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: LimitRanger, configuration: {}}]\n',
      },
      'plugins[0].configuration: LimitRanger takes no configuration',
    ],
    [
      'another kind of file',
      { '/x.yaml': 'apiVersion: v1\nkind: ConfigMap\n' },
      '/x.yaml: apiVersion: must be apiserver.config.k8s.io/v1 or apiserver.k8s.io/v1alpha1, got "v1"',
    ],
    [
      'an embedded configuration of the wrong kind',
      {
        '/x.yaml':
          'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: ResourceQuota, configuration: {apiVersion: apiserver.config.k8s.io/v1, kind: Configuration}}]\n',
      },
      'plugins[0].configuration.kind: must be ResourceQuotaConfiguration for apiserver.config.k8s.io/v1, got "Configuration"',
    ],
    [
      'a path that cannot be read',
      {
        '/etc/x.yaml':
          'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: ResourceQuota, path: rq.yaml}]\n',
      },
      'plugins[0].path: /etc/rq.yaml: cannot be read: ENOENT',
    ],
    [
      'a bad field in the file a path names',
      {
        '/etc/x.yaml':
          'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: ResourceQuota, path: /q/rq.yaml}]\n',
        '/q/rq.yaml': 'apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\nlimitedResources: [{resource: ""}]\n',
      },
      'plugins[0].path: /q/rq.yaml: limitedResources[0].resource: Required value',
    ],
    ['a file that is not YAML', { '/x.yaml': 'plugins: [unclosed\n' }, '/x.yaml: is not YAML or JSON: '],
    ['a missing file', {}, '/x.yaml: cannot be read: ENOENT'],
  ])('refuses %s, naming the variable and the field', (_name, contents, message) => {
    const file = Object.keys(contents).find((path) => path.endsWith('x.yaml')) ?? '/x.yaml';
    const text = refusal({ ADMISSION_CONFIG_FILE: file }, contents);
    expect(text).toMatch(/^invalid configuration: ADMISSION_CONFIG_FILE: /);
    expect(text).toContain(message);
  });
});
