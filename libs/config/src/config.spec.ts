import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_BODY_LIMIT_BYTES, loadConfig } from './config.js';

describe('loadConfig', () => {
  it.each([
    [{}, false],
    [{ INVENTORY_SOURCE: 'kubernetes' }, true],
    [{ INVENTORY_SOURCE: 'postgres', INVENTORY_DATABASE_URL: 'postgres://x/y', INVENTORY_RELATION: 'objects' }, true],
    [{ INVENTORY_SOURCE: 'kubernetes', QUOTA_AWAITS_FIRST_COUNT: 'false' }, false],
    [{ QUOTA_AWAITS_FIRST_COUNT: 'true' }, true],
  ])('awaits first counts by default only where an inventory can count (%j)', (env, expected) => {
    expect(loadConfig(env).awaitFirstCount).toBe(expected);
  });

  it('defaults to port 8080, no external database or Redis, a ~3 MiB body limit', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: undefined,
      databaseReadUrl: undefined,
      readReplicaWaitMs: 1000,
      requireSynchronousStandby: false,
      databaseRuntimeRole: undefined,
      redisUrl: undefined,
      bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES,
      bodiesInFlightMaxBytes: 64 * 1024 * 1024,
      logLevel: 'info',
      databasePoolSize: 8,
      admissionBatchMax: 64,
      projectionStepMax: 250,
      projectionCoalesceMs: 25,
      admissionGroupMax: 256,
      admissionGroupsInFlight: 2,
      admissionRetryMax: 12,
      statementTimeoutMs: 5000,
      reservationTtlMaxSeconds: 604800,
      queue: {
        waitMaxSeconds: 3600,
        perNamespaceMax: 100,
        totalMax: 10_000,
        passMax: 8,
        passSeconds: 60,
        blockSharePercent: 50,
        watchesPerPrincipalMax: 8,
        sweepIntervalMs: 1000,
      },
      quotasPerNamespaceMax: 16,
      limitRangesPerNamespaceMax: 16,
      sharedQuotaNamespacesMax: 1000,
      quotaWarningPercent: 90,
      projectionBatchSize: 1000,
      projectionPollMs: 1000,
      snapshotEvery: 10_000,
      reconcileIntervalSeconds: 60,
      reconcileGraceSeconds: 120,
      reconcileWatch: true,
      reconcileManagedLabel: true,
      reconcileWebhookConfiguration: 'quota-ledger',
      reconcileConcurrency: 4,
      reconcileAfterDeleteSeconds: 5,
      inventory: { source: 'none' },
      awaitFirstCount: false,
      namespaceLabelsFrom: 'reviews',
      tokensFile: undefined,
      insecureDev: false,
      tls: undefined,
      rateLimitPerSecond: 500,
      rateLimitBurst: 1000,
      webhookUnauthenticatedRate: { perSecond: 100, burst: 200 },
      requestTimeoutMs: 30000,
      shutdownTimeoutMs: 25000,
      shutdownDrainSeconds: 10,
      metricsPort: 9464,
      admission: { plugins: ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota'], configFile: undefined, limitedResources: [] },
    });
  });

  it.each([
    [
      { TLS_CERT_FILE: '/tls/tls.crt', TLS_KEY_FILE: '/tls/tls.key' },
      {
        certFile: '/tls/tls.crt',
        keyFile: '/tls/tls.key',
        clientCaFile: undefined,
        clientCertRole: 'webhook',
        clientCertTrustUserInfo: true,
      },
    ],
    [
      {
        TLS_CERT_FILE: 'c',
        TLS_KEY_FILE: 'k',
        TLS_CLIENT_CA_FILE: 'ca',
        TLS_CLIENT_CERT_ROLE: 'auditor',
        TLS_CLIENT_CERT_TRUST_USER_INFO: 'false',
      },
      { certFile: 'c', keyFile: 'k', clientCaFile: 'ca', clientCertRole: 'auditor', clientCertTrustUserInfo: false },
    ],
  ])('reads TLS settings %o', (env, tls) => {
    expect(loadConfig(env).tls).toEqual(tls);
  });

  it.each([
    [{ TLS_CERT_FILE: 'c' }, 'TLS_KEY_FILE'],
    [{ TLS_KEY_FILE: 'k' }, 'TLS_CERT_FILE'],
    [{ TLS_CLIENT_CA_FILE: 'ca' }, 'TLS_CLIENT_CA_FILE'],
    [{ TLS_CERT_FILE: 'c', TLS_KEY_FILE: 'k', TLS_CLIENT_CERT_ROLE: 'root' }, 'TLS_CLIENT_CERT_ROLE'],
    [{ QUOTA_LEDGER_INSECURE_DEV: 'yes' }, 'QUOTA_LEDGER_INSECURE_DEV'],
    [{ RATE_LIMIT_BURST: '0' }, 'RATE_LIMIT_BURST'],
    [{ BODY_LIMIT_BYTES: '4194304', BODIES_IN_FLIGHT_MAX_BYTES: '1048576' }, 'BODIES_IN_FLIGHT_MAX_BYTES'],
  ])('refuses %o, naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`invalid configuration: ${variable}`));
  });

  it('turns the development flag on only for true or 1', () => {
    expect(loadConfig({ QUOTA_LEDGER_INSECURE_DEV: 'true' }).insecureDev).toBe(true);
    expect(loadConfig({ QUOTA_LEDGER_INSECURE_DEV: '1' }).insecureDev).toBe(true);
    expect(loadConfig({ QUOTA_LEDGER_INSECURE_DEV: 'false' }).insecureDev).toBe(false);
  });

  it.each([
    [
      { INVENTORY_SOURCE: 'kubernetes', INVENTORY_KUBECONFIG: '/etc/kube/config' },
      {
        source: 'kubernetes',
        kubeconfigPath: '/etc/kube/config',
        inCluster: false,
        timeoutMs: 10000,
        pageSize: 500,
        cache: true,
        cacheMaxObjects: 500_000,
        cacheMaxBytes: 268_435_456,
        customKinds: [],
      },
    ],
    [
      {
        INVENTORY_SOURCE: 'kubernetes',
        INVENTORY_IN_CLUSTER: 'true',
        INVENTORY_PAGE_SIZE: '2',
        INVENTORY_CACHE: 'false',
        INVENTORY_CACHE_MAX_OBJECTS: '1000',
        INVENTORY_CACHE_MAX_BYTES: '65536',
      },
      {
        source: 'kubernetes',
        inCluster: true,
        timeoutMs: 10000,
        pageSize: 2,
        cache: false,
        cacheMaxObjects: 1000,
        cacheMaxBytes: 65536,
        customKinds: [],
      },
    ],
    [
      { INVENTORY_SOURCE: 'postgres', INVENTORY_DATABASE_URL: 'postgres://p@h/platform', INVENTORY_RELATION: 'platform.objects' },
      { source: 'postgres', databaseUrl: 'postgres://p@h/platform', relation: 'platform.objects', timeoutMs: 10000, customKinds: [] },
    ],
    [
      { INVENTORY_SOURCE: 'http', INVENTORY_URL: 'https://platform.example.com/api', INVENTORY_TOKEN: 't', INVENTORY_TIMEOUT_MS: '2500' },
      { source: 'http', url: 'https://platform.example.com/api', token: 't', timeoutMs: 2500, customKinds: [] },
    ],
  ])('reads the inventory source %o', (env, inventory) => {
    expect(loadConfig(env).inventory).toEqual(inventory);
  });

  it.each([
    [{ INVENTORY_SOURCE: 'etcd' }, /INVENTORY_SOURCE: must be one of none, kubernetes, postgres, http/],
    [{ INVENTORY_SOURCE: 'postgres', INVENTORY_RELATION: 'objects' }, /INVENTORY_DATABASE_URL: is required when INVENTORY_SOURCE=postgres/],
    [{ INVENTORY_SOURCE: 'postgres', INVENTORY_DATABASE_URL: 'postgres://h/db' }, /INVENTORY_RELATION: is required/],
    [{ INVENTORY_SOURCE: 'http' }, /INVENTORY_URL: is required when INVENTORY_SOURCE=http/],
    [{ INVENTORY_SOURCE: 'kubernetes', INVENTORY_PAGE_SIZE: '0' }, /INVENTORY_PAGE_SIZE/],
    [{ INVENTORY_SOURCE: 'http', INVENTORY_URL: 'ftp://x' }, /INVENTORY_URL: must use http: or https:/],
    [{ CUSTOM_RESOURCES: 'widgets' }, /CUSTOM_RESOURCES: "widgets" is not resource\.group\/version=Kind/],
    [
      { CUSTOM_RESOURCES: 'Widgets.example.com/v1=Widget' },
      /CUSTOM_RESOURCES: "Widgets\.example\.com\/v1=Widget" is not resource\.group\/version=Kind/,
    ],
    [
      { CUSTOM_RESOURCES: 'serviceaccounts/v1=ServiceAccount,serviceaccounts/v2=ServiceAccount' },
      /CUSTOM_RESOURCES: lists serviceaccounts twice/,
    ],
    [{ CUSTOM_RESOURCES: 'widgets.example.com/1=Widget' }, /CUSTOM_RESOURCES: "widgets\.example\.com\/1=Widget"/],
    [{ CUSTOM_RESOURCES: 'widgets.example.com/v1=widget' }, /CUSTOM_RESOURCES/],
    [
      { CUSTOM_RESOURCES: 'widgets.example.com/v1=Widget,widgets.example.com/v2=Widget' },
      /CUSTOM_RESOURCES: lists widgets\.example\.com twice/,
    ],
  ])('refuses an inventory configuration that cannot work: %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reconciles every 600 s by default when the reconciler watches the cluster, else every 60 s; a set interval wins', () => {
    expect(loadConfig({ INVENTORY_SOURCE: 'kubernetes' })).toMatchObject({ reconcileWatch: true, reconcileIntervalSeconds: 600 });
    expect(loadConfig({ INVENTORY_SOURCE: 'kubernetes', RECONCILE_WATCH: 'false' })).toMatchObject({
      reconcileWatch: false,
      reconcileIntervalSeconds: 60,
    });
    expect(
      loadConfig({ INVENTORY_SOURCE: 'postgres', INVENTORY_DATABASE_URL: 'postgres://h/db', INVENTORY_RELATION: 'o' })
        .reconcileIntervalSeconds,
    ).toBe(60);
    expect(loadConfig({ INVENTORY_SOURCE: 'kubernetes', RECONCILE_INTERVAL_SECONDS: '30' }).reconcileIntervalSeconds).toBe(30);
  });

  it('reads CUSTOM_RESOURCES of built-in groups, the core group included (count/serviceaccounts)', () => {
    const config = loadConfig({
      INVENTORY_SOURCE: 'kubernetes',
      CUSTOM_RESOURCES: 'serviceaccounts/v1=ServiceAccount,poddisruptionbudgets.policy/v1=PodDisruptionBudget',
    });
    expect(config.inventory).toMatchObject({
      customKinds: [
        { kind: 'ServiceAccount', apiVersion: 'v1', groupResource: { group: '', resource: 'serviceaccounts' } },
        { kind: 'PodDisruptionBudget', apiVersion: 'policy/v1', groupResource: { group: 'policy', resource: 'poddisruptionbudgets' } },
      ],
    });
  });

  it('reads CUSTOM_RESOURCES into the kinds the inventory lists besides the known ones', () => {
    const config = loadConfig({
      INVENTORY_SOURCE: 'kubernetes',
      CUSTOM_RESOURCES: ' widgets.example.com/v1=Widget, gadgets.tools.example.org/v1beta2=Gadget ',
    });
    expect(config.inventory).toMatchObject({
      customKinds: [
        { kind: 'Widget', apiVersion: 'example.com/v1', groupResource: { group: 'example.com', resource: 'widgets' } },
        { kind: 'Gadget', apiVersion: 'tools.example.org/v1beta2', groupResource: { group: 'tools.example.org', resource: 'gadgets' } },
      ],
    });
  });

  it('reads the documented variables', () => {
    const config = loadConfig({ PORT: '9000', DATABASE_URL: 'postgres://u@h/db', REDIS_URL: 'redis://127.0.0.1:6379', LOG_LEVEL: 'debug' });
    expect(config).toMatchObject({ port: 9000, databaseUrl: 'postgres://u@h/db', redisUrl: 'redis://127.0.0.1:6379', logLevel: 'debug' });
  });

  it('reads a DATABASE_URL of several hosts as libpq writes it, and the synchronous standby requirement', () => {
    const hosts = 'postgres://ql@db-a:5432,db-b:5432/ledger?target_session_attrs=read-write';
    const config = loadConfig({
      DATABASE_URL: hosts,
      REDIS_URL: 'redis://r:6379',
      DATABASE_READ_URL: 'postgres://db-b,db-a/ledger?target_session_attrs=prefer-standby',
      DATABASE_REQUIRE_SYNCHRONOUS_STANDBY: 'true',
    });
    expect(config).toMatchObject({
      databaseUrl: hosts,
      databaseReadUrl: 'postgres://db-b,db-a/ledger?target_session_attrs=prefer-standby',
      requireSynchronousStandby: true,
    });
  });

  it.each([
    [{ DATABASE_URL: 'postgres://a,b/ledger' }, /REDIS_URL: is required when DATABASE_URL names several hosts/],
    [{ DATABASE_URL: 'postgres://a,,b/ledger', REDIS_URL: 'redis://r' }, /DATABASE_URL: has an empty host/],
    [{ DATABASE_URL: 'postgres://a,b:x/ledger', REDIS_URL: 'redis://r' }, /DATABASE_URL: must be a URL/],
    [
      { DATABASE_URL: 'postgres://a,b/ledger?target_session_attrs=master', REDIS_URL: 'redis://r' },
      /DATABASE_URL: target_session_attrs must be one of/,
    ],
    [{ DATABASE_READ_URL: 'postgres://a/ledger?target_session_attrs=replica' }, /DATABASE_READ_URL: target_session_attrs must be one of/],
    [{ DATABASE_REQUIRE_SYNCHRONOUS_STANDBY: 'yes' }, /DATABASE_REQUIRE_SYNCHRONOUS_STANDBY: must be one of/],
  ])('refuses a database setting that cannot work: %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each([
    ['PORT', 'eighty', /PORT: must be a whole number/],
    ['PORT', '70000', /PORT: must be between 0 and 65535/],
    ['DATABASE_URL', 'mysql://h/db', /DATABASE_URL: must use postgres: or postgresql:/],
    ['DATABASE_URL', 'not a url', /DATABASE_URL: must be a URL/],
    ['REDIS_URL', 'http://h', /REDIS_URL: must use redis: or rediss:/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL: must be one of/],
    ['BODY_LIMIT_BYTES', '10', /BODY_LIMIT_BYTES: must be between/],
    ['SHUTDOWN_DRAIN_SECONDS', '1.5', /SHUTDOWN_DRAIN_SECONDS: must be a whole number/],
  ])('stops on a bad %s (%s), naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
