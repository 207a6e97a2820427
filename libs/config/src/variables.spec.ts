import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig, loadStandaloneConfig } from './config.js';
import { cliEnvironment, loadCliConfig } from './cli-config.js';
import { VARIABLE_GROUPS, VARIABLES, type VariableName } from './variables.js';

const DIR = fileURLToPath(new URL('.', import.meta.url));
const NAMES = Object.keys(VARIABLES) as VariableName[];

/** The names the loaders' source reads (`env['NAME']`, `helper(env, 'NAME')`): the pattern test/support/deploy.ts scans for too. */
function namesInSource(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))) {
    for (const match of readFileSync(`${DIR}${file}`, 'utf8').matchAll(/\benv(?:\[\s*|,\s*)'([A-Z][A-Z0-9_]*)'/g)) names.add(match[1]!);
  }
  return names;
}

/** The names a loader asks the environment for, recorded by a proxy around `env`. */
function namesRead(load: (env: Record<string, string | undefined>) => unknown, env: Record<string, string> = {}): Set<string> {
  const read = new Set<string>();
  const proxy = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return target[key as string];
    },
  });
  load(proxy);
  return read;
}

describe('VARIABLES, the table the loaders and the configuration reference share', () => {
  it('names exactly the variables the loaders read in their source', () => {
    expect([...namesInSource()].sort()).toEqual([...NAMES].sort());
  });

  it('holds every variable loadConfig asks for, whichever inventory source and TLS settings', () => {
    const variants: Record<string, string>[] = [
      {},
      {
        INVENTORY_SOURCE: 'kubernetes',
        TLS_CERT_FILE: 'c',
        TLS_KEY_FILE: 'k',
        TLS_CLIENT_CA_FILE: 'ca',
        WEBHOOK_UNAUTHENTICATED_PORT: '8443',
      },
      { INVENTORY_SOURCE: 'postgres', INVENTORY_DATABASE_URL: 'postgres://x/y', INVENTORY_RELATION: 'objects' },
      { INVENTORY_SOURCE: 'http', INVENTORY_URL: 'https://inventory.example', INVENTORY_TOKEN: 't' },
    ];
    const read = new Set<string>();
    for (const env of variants) for (const name of namesRead((e) => loadConfig(e), env)) read.add(name);
    for (const name of namesRead((e) => loadStandaloneConfig(e))) read.add(name);
    for (const name of namesRead((e) => loadCliConfig(e, {}))) read.add(name);
    expect([...read].filter((name) => !(name in VARIABLES)).sort()).toEqual([]);
  });

  it('gives every variable a group, a meaning and, for an integer, a default within its bounds', () => {
    for (const name of NAMES) {
      const definition = VARIABLES[name];
      expect(Object.keys(VARIABLE_GROUPS), name).toContain(definition.group);
      expect(definition.meaning.length, name).toBeGreaterThan(10);
      if (definition.kind === 'integer') {
        expect(definition.default, name).toBeGreaterThanOrEqual(definition.min);
        expect(definition.default, name).toBeLessThanOrEqual(definition.max);
      }
      if (definition.kind === 'oneOf' && 'default' in definition) expect(definition.values, name).toContain(definition.default);
    }
  });

  it('are the defaults loadConfig answers with an empty environment, and its bounds the ones it enforces', () => {
    const config = loadConfig({});
    expect(config.port).toBe(VARIABLES.PORT.default);
    expect(config.reconcileGraceSeconds).toBe(VARIABLES.RECONCILE_GRACE_SECONDS.default);
    expect(config.logLevel).toBe(VARIABLES.LOG_LEVEL.default);
    expect(() => loadConfig({ PORT: String(VARIABLES.PORT.max + 1) })).toThrow(/PORT: must be between 0 and 65535/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL: must be one of debug, info, warn, error/);
    expect(() => loadConfig({ REDIS_URL: 'http://x' })).toThrow(/REDIS_URL: must use redis: or rediss:/);
  });

  it('lists the QUOTA_LEDGER_* variables quotactl copies from the environment', () => {
    expect(typeof cliEnvironment).toBe('function');
    for (const name of ['QUOTA_LEDGER_SERVER', 'QUOTA_LEDGER_TOKEN', 'QUOTA_LEDGER_CA_FILE', 'QUOTA_LEDGER_REQUEST_TIMEOUT'])
      expect(NAMES).toContain(name);
  });
});
