import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROLES, TokenSet, sha256Hex } from '../../apps/admission-api/src/auth/tokens.js';
import {
  ALLOWED_VARIABLES,
  CONFIG_VARIABLES,
  DEPLOY,
  DOCUMENTED_VARIABLES,
  MIGRATE,
  ROOT,
  asList,
  asObject,
  asText,
  clone,
  commandProblems,
  get,
  loadYaml,
  yamlFilesUnder,
  type Json,
} from '../support/deploy.js';

/**
 * The deployment artifacts (deploy/compose.yaml, deploy/tokens.example.yaml; the Dockerfile has dockerfile.test.ts)
 * checked against the code they deploy. No Docker engine runs here, so the files are parsed and
 * every rule is a function returning the problems it finds: each is run on the real files (no
 * problems) and on a broken copy (the problem is named), so no rule passes vacuously. The
 * Kubernetes manifests are rendered with kustomize and checked in kubernetes-manifests.test.ts.
 */

// The Helm chart's templates are Go templates, not YAML: test/helm/chart.test.ts lints and renders them.
const ALL_YAML = yamlFilesUnder(DEPLOY).filter((file) => !file.includes(join('helm', 'quota-ledger', 'templates')));
const COMPOSE_FILE = join(DEPLOY, 'compose.yaml');
const TOKENS_FILE = join(DEPLOY, 'tokens.example.yaml');

// ---------------------------------------------------------------------------------------------
// Rules for the compose file.

function dependsOnOf(service: unknown): Map<string, string | undefined> {
  const raw = get(service, 'depends_on');
  if (Array.isArray(raw)) return new Map(raw.map((target) => [String(target), undefined]));
  return new Map(Object.entries(asObject(raw)).map(([target, spec]) => [target, asText(get(spec, 'condition'))]));
}

function composeEnvironment(service: unknown): Map<string, string> {
  const raw = get(service, 'environment');
  if (Array.isArray(raw)) {
    return new Map(raw.map((line) => String(line).split('=')).map(([key = '', ...rest]) => [key, rest.join('=')]));
  }
  return new Map(Object.entries(asObject(raw)).map(([key, value]) => [key, String(value)]));
}

function composeProblems(compose: unknown): string[] {
  const problems: string[] = [];
  const services = asObject(get(compose, 'services'));
  for (const [name, service] of Object.entries(services)) {
    const where = `compose service ${name}`;
    for (const [target, condition] of dependsOnOf(service)) {
      if (!(target in services)) {
        problems.push(`${where}: depends_on the unknown service ${target}`);
        continue;
      }
      if (condition !== undefined && !['service_started', 'service_healthy', 'service_completed_successfully'].includes(condition)) {
        problems.push(`${where}: depends_on ${target} with the unknown condition ${condition}`);
      }
      // service_healthy on a service without a healthcheck never becomes true: the stack hangs.
      const check = get(services[target], 'healthcheck');
      if (condition === 'service_healthy' && (check === undefined || get(check, 'disable') === true)) {
        problems.push(`${where}: waits for ${target} to be healthy, but ${target} has no healthcheck`);
      }
    }
    const build = get(service, 'build');
    const context = asText(get(build, 'context')) ?? asText(build);
    if (context !== undefined) {
      const dockerfile = asText(get(build, 'dockerfile')) ?? 'Dockerfile';
      if (!existsSync(join(DEPLOY, context, dockerfile))) problems.push(`${where}: the build context ${context} has no ${dockerfile}`);
    }
    const image = asText(get(service, 'image')) ?? '';
    if (context !== undefined || image.startsWith('quota-ledger')) {
      const raw = get(service, 'command');
      const command = Array.isArray(raw) ? raw : (asText(raw)?.split(/\s+/) ?? []);
      if (command.length === 0) problems.push(`${where}: no command (every app service names its entry point)`);
      else problems.push(...commandProblems(where, command));
      for (const variable of composeEnvironment(service).keys()) {
        if (!ALLOWED_VARIABLES.has(variable)) problems.push(`${where}: sets ${variable}, which no app reads`);
      }
    }
    for (const volume of asList(get(service, 'volumes'))) {
      const source = typeof volume === 'string' ? volume.split(':')[0] : asText(get(volume, 'source'));
      if (source !== undefined && /^[./]/.test(source) && !existsSync(join(DEPLOY, source)))
        problems.push(`${where}: mounts ${source}, which does not exist`);
    }
  }
  return problems;
}

describe('deploy/: every YAML file parses', () => {
  it('finds the compose file, the example tokens and the kustomize base and overlays', () => {
    const names = ALL_YAML.map((f) => relative(ROOT, f));
    expect(names).toEqual(
      expect.arrayContaining([
        'deploy/compose.yaml',
        'deploy/tokens.example.yaml',
        'deploy/kubernetes/kustomization.yaml',
        'deploy/kubernetes/base/kustomization.yaml',
        'deploy/kubernetes/base/api.yaml',
        'deploy/kubernetes/overlays/cert-manager/kustomization.yaml',
        'deploy/kubernetes/overlays/no-cert-manager/kustomization.yaml',
      ]),
    );
    for (const file of ALL_YAML) expect(() => loadYaml(file), relative(ROOT, file)).not.toThrow();
  });
});

describe('deploy/compose.yaml', () => {
  const [loaded] = loadYaml(COMPOSE_FILE);
  const compose = loaded?.value;
  const services = asObject(get(compose, 'services'));

  it('has the six services, each depending only on services that exist', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'postgres', 'projection-worker', 'reconciler', 'redis']);
    expect(composeProblems(compose)).toEqual([]);
  });

  it('migrates once, after PostgreSQL is healthy, and starts the API only after a successful migration', () => {
    expect(get(services['migrate'], 'command')).toEqual(['node', MIGRATE]);
    expect(get(services['migrate'], 'restart')).toBe('no');
    expect(dependsOnOf(services['migrate']).get('postgres')).toBe('service_healthy');
    expect(String(asList(get(services['postgres'], 'healthcheck', 'test')).join(' '))).toMatch(/pg_isready/);
    for (const app of ['api', 'projection-worker', 'reconciler']) {
      expect(dependsOnOf(services[app]).get('migrate'), app).toBe('service_completed_successfully');
    }
  });

  it('publishes the API on 8080 with the example tokens mounted read-only', () => {
    const api = services['api'];
    expect(asList(get(api, 'ports'))).toContain('8080:8080');
    const environment = composeEnvironment(api);
    expect(environment.get('HOST')).toBe('0.0.0.0');
    expect(environment.get('TOKENS_FILE')).toBe('/config/tokens.yaml');
    expect(environment.get('DATABASE_URL')).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres:5432\//);
    expect(environment.get('REDIS_URL')).toMatch(/^redis:\/\/redis:6379/);
    expect(asList(get(api, 'volumes'))).toContain('./tokens.example.yaml:/config/tokens.yaml:ro');
  });

  it('builds every app service from the repository root and runs the reconciler without an inventory', () => {
    for (const app of ['migrate', 'api', 'projection-worker', 'reconciler']) {
      expect(get(services[app], 'build', 'context'), app).toBe('..');
    }
    expect(composeEnvironment(services['reconciler']).get('INVENTORY_SOURCE')).toBe('none');
  });

  it('an unknown depends_on target fails', () => {
    const broken = clone(compose) as Json;
    const api = asObject(get(broken, 'services', 'api'));
    api['depends_on'] = { ...asObject(api['depends_on']), databse: { condition: 'service_started' } };
    expect(composeProblems(broken).join('\n')).toMatch(/depends_on the unknown service databse/);
  });

  it('waiting for a service without a healthcheck to be healthy fails', () => {
    const broken = clone(compose) as Json;
    delete asObject(get(broken, 'services', 'postgres'))['healthcheck'];
    expect(composeProblems(broken).join('\n')).toMatch(/waits for postgres to be healthy, but postgres has no healthcheck/);
  });

  it('a command whose script does not exist, or a variable no app reads, fails', () => {
    const broken = clone(compose) as Json;
    const worker = asObject(get(broken, 'services', 'projection-worker'));
    worker['command'] = ['node', 'dist/apps/projection/src/main.js'];
    worker['environment'] = { ...asObject(worker['environment']), METRIC_PORT: '9464' };
    const problems = composeProblems(broken).join('\n');
    expect(problems).toMatch(/has no source apps\/projection\/src\/main\.ts/);
    expect(problems).toMatch(/sets METRIC_PORT/);
  });
});

describe('deploy/tokens.example.yaml', () => {
  const text = readFileSync(TOKENS_FILE, 'utf8');

  it('is a tokens file the API accepts, with an entry for each role', () => {
    const set = TokenSet.parse(text, TOKENS_FILE);
    const [loaded] = loadYaml(TOKENS_FILE);
    const roles = new Set(asList(get(loaded?.value, 'tokens')).flatMap((t) => asList(get(t, 'roles'))));
    expect([...roles].sort()).toEqual([...ROLES].sort());
    expect(set.size).toBe(asList(get(loaded?.value, 'tokens')).length);
  });

  it('explains how to make a token and says the examples must never be used', () => {
    expect(text).toMatch(/openssl rand -hex 32/);
    expect(text).toMatch(/printf %s "?\$?TOKEN"? \| sha256sum/);
    expect(text).toMatch(/never use/i);
  });

  it('each example digest is the sha-256 of the example token written beside it', () => {
    const pairs = [...text.matchAll(/#\s*token:\s*(\S+)[\s\S]*?sha256:\s*"([0-9a-f]{64})"/g)];
    expect(pairs).toHaveLength(ROLES.length);
    const set = TokenSet.parse(text, TOKENS_FILE);
    for (const [, token = '', digest] of pairs) {
      expect(token).toMatch(/example/);
      expect(sha256Hex(token)).toBe(digest);
      expect(set.authenticate(token)).toBeDefined();
    }
  });
});

describe('the environment the artifacts rely on', () => {
  it('every documented variable is one the configuration reads', () => {
    expect(DOCUMENTED_VARIABLES.filter((v) => !CONFIG_VARIABLES.has(v))).toEqual([]);
  });
});
