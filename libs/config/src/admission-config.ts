import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';

/**
 * The admission chain as kube-apiserver is told it: which plugins run
 * (`--enable-admission-plugins` / `--disable-admission-plugins` as ADMISSION_PLUGINS_ENABLE /
 * ADMISSION_PLUGINS_DISABLE) and their configuration (`--admission-control-config-file` as
 * ADMISSION_CONFIG_FILE, in its own AdmissionConfiguration format). Plain data: this lib imports
 * no other, the admission API hands it to the ledger and the domain.
 */

/** The plugins this service runs, in the order it runs them (kube-apiserver's order, whatever the variables say). */
export const ADMISSION_PLUGIN_NAMES = ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota', 'AlwaysDeny'] as const;

export type AdmissionPluginName = (typeof ADMISSION_PLUGIN_NAMES)[number];

/** Enabled unless disabled (kube-apiserver enables these by default too; AlwaysDeny it does not). */
export const DEFAULT_ADMISSION_PLUGIN_NAMES: readonly AdmissionPluginName[] = ['NamespaceLifecycle', 'LimitRanger', 'ResourceQuota'];

/** One `matchScopes` entry: a ScopedResourceSelectorRequirement. */
export interface ScopeRequirementConfig {
  readonly scopeName: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

/** One entry of the ResourceQuota plugin's `limitedResources`. */
export interface LimitedResourceConfig {
  readonly apiGroup?: string;
  readonly resource: string;
  readonly matchContains?: readonly string[];
  readonly matchScopes?: readonly ScopeRequirementConfig[];
}

export interface AdmissionControlConfig {
  /** The plugins that run, in the order they run. */
  readonly plugins: readonly AdmissionPluginName[];
  /** ADMISSION_CONFIG_FILE as given (undefined: none). */
  readonly configFile: string | undefined;
  /** The ResourceQuota plugin's `limitedResources` from that file (empty: none). */
  readonly limitedResources: readonly LimitedResourceConfig[];
}

/** A value that cannot be used: `variable` is the environment variable, `message` says which field and why. */
export class AdmissionConfigProblem extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads a file's text (a seam: the specs hand in files from memory). */
export type ReadTextFile = (path: string) => string;

const readTextFile: ReadTextFile = (path) => readFileSync(path, 'utf8');

export function admissionControlConfig(env: Env, read: ReadTextFile = readTextFile): AdmissionControlConfig {
  const plugins = enabledPlugins(env);
  const configFile = env['ADMISSION_CONFIG_FILE'] || undefined;
  return { plugins, configFile, limitedResources: configFile ? readAdmissionConfiguration(configFile, read) : [] };
}

/** The default set, plus ADMISSION_PLUGINS_ENABLE, minus ADMISSION_PLUGINS_DISABLE, in the fixed order. */
function enabledPlugins(env: Env): AdmissionPluginName[] {
  const enable = pluginList(env, 'ADMISSION_PLUGINS_ENABLE');
  const disable = pluginList(env, 'ADMISSION_PLUGINS_DISABLE');
  const both = enable.filter((name) => disable.includes(name));
  if (both.length > 0) {
    throw new AdmissionConfigProblem(
      'ADMISSION_PLUGINS_DISABLE',
      `${both.join(', ')} also in ADMISSION_PLUGINS_ENABLE: a plugin is either enabled or disabled`,
    );
  }
  return ADMISSION_PLUGIN_NAMES.filter(
    (name) => (DEFAULT_ADMISSION_PLUGIN_NAMES.includes(name) || enable.includes(name)) && !disable.includes(name),
  );
}

function pluginList(env: Env, variable: string): AdmissionPluginName[] {
  const names = (env[variable] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of names) {
    if (!(ADMISSION_PLUGIN_NAMES as readonly string[]).includes(name)) {
      throw new AdmissionConfigProblem(variable, `plugin "${name}" is unknown (known: ${ADMISSION_PLUGIN_NAMES.join(', ')})`);
    }
  }
  return names as AdmissionPluginName[];
}

const ADMISSION_CONFIGURATION_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.k8s.io/v1alpha1'];

/** kind per apiVersion of the ResourceQuota plugin's configuration. */
const RESOURCE_QUOTA_CONFIGURATION_KINDS: Readonly<Record<string, string>> = {
  'apiserver.config.k8s.io/v1': 'ResourceQuotaConfiguration',
  'resourcequota.admission.k8s.io/v1': 'Configuration',
  'resourcequota.admission.k8s.io/v1beta1': 'Configuration',
};

/** The scopes a quota (and so a limited scope) may name. */
const QUOTA_SCOPES = [
  'Terminating',
  'NotTerminating',
  'BestEffort',
  'NotBestEffort',
  'PriorityClass',
  'CrossNamespacePodAffinity',
  'VolumeAttributesClass',
];

/** A field that cannot be used, named by its path in the file ('' for the file as a whole). */
class FieldProblem extends Error {
  constructor(field: string, problem: string) {
    super(field ? `${field}: ${problem}` : problem);
  }
}

/**
 * Reads an AdmissionConfiguration file (YAML or JSON) and returns the ResourceQuota plugin's
 * limitedResources. A plugin's `path` is relative to the file's directory, as kube-apiserver
 * resolves it. Any problem names the file and the field.
 */
export function readAdmissionConfiguration(file: string, read: ReadTextFile = readTextFile): LimitedResourceConfig[] {
  try {
    return resourceQuotaLimits(document(file, read), file, read);
  } catch (error) {
    if (error instanceof FieldProblem) throw new AdmissionConfigProblem('ADMISSION_CONFIG_FILE', `${file}: ${error.message}`);
    throw error;
  }
}

/** A file's one YAML (or JSON) document. */
function document(file: string, read: ReadTextFile): unknown {
  let text: string;
  try {
    text = read(file);
  } catch (error) {
    throw new FieldProblem('', `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return parse(text);
  } catch (error) {
    throw new FieldProblem('', `is not YAML or JSON: ${(error as Error).message.split('\n')[0]?.replace(/:$/, '')}`);
  }
}

function resourceQuotaLimits(raw: unknown, file: string, read: ReadTextFile): LimitedResourceConfig[] {
  const root = object(raw, '', ['apiVersion', 'kind', 'plugins']);
  typeOf(root, '', ADMISSION_CONFIGURATION_VERSIONS, () => 'AdmissionConfiguration');
  const seen = new Set<string>();
  let limited: LimitedResourceConfig[] = [];
  list(root['plugins'], 'plugins').forEach((item, index) => {
    const at = `plugins[${index}]`;
    const plugin = object(item, at, ['name', 'configuration', 'path']);
    const name = string(plugin['name'], `${at}.name`);
    // kube-apiserver ignores the configuration of a plugin it does not run; a name this service
    // does not know is refused instead, so that a configuration never silently does nothing here.
    if (!(ADMISSION_PLUGIN_NAMES as readonly string[]).includes(name)) {
      throw new FieldProblem(`${at}.name`, `unsupported plugin "${name}": this service runs ${ADMISSION_PLUGIN_NAMES.join(', ')}`);
    }
    if (seen.has(name)) throw new FieldProblem(`${at}.name`, `Duplicate value: "${name}"`);
    seen.add(name);
    const { configuration, path } = plugin;
    if (configuration !== undefined && path !== undefined) throw new FieldProblem(at, 'give configuration or path, not both');
    if (configuration === undefined && path === undefined) return;
    if (name !== 'ResourceQuota')
      throw new FieldProblem(`${at}.${configuration === undefined ? 'path' : 'configuration'}`, `${name} takes no configuration`);
    if (configuration !== undefined) {
      limited = limitedResources(configuration, `${at}.configuration`);
    } else {
      const relative = string(path, `${at}.path`);
      const absolute = isAbsolute(relative) ? relative : resolve(dirname(file), relative);
      try {
        limited = limitedResources(document(absolute, read), '');
      } catch (error) {
        if (error instanceof FieldProblem) throw new FieldProblem(`${at}.path`, `${absolute}: ${error.message}`);
        throw error;
      }
    }
  });
  return limited;
}

/** The ResourceQuota plugin's Configuration, at `at` (`plugins[0].configuration`; '' for a file of its own). */
function limitedResources(raw: unknown, at: string): LimitedResourceConfig[] {
  const config = object(raw, at, ['apiVersion', 'kind', 'limitedResources']);
  typeOf(config, at, Object.keys(RESOURCE_QUOTA_CONFIGURATION_KINDS), (version) => RESOURCE_QUOTA_CONFIGURATION_KINDS[version] ?? '');
  if (config['limitedResources'] === undefined) return [];
  return list(config['limitedResources'], child(at, 'limitedResources')).map((item, index) =>
    limitedResource(item, child(at, `limitedResources[${index}]`)),
  );
}

const child = (at: string, name: string): string => (at ? `${at}.${name}` : name);

function limitedResource(raw: unknown, at: string): LimitedResourceConfig {
  const entry = object(raw, at, ['apiGroup', 'resource', 'matchContains', 'matchScopes']);
  const resource = string(entry['resource'], `${at}.resource`);
  if (resource === '') throw new FieldProblem(`${at}.resource`, 'Required value');
  const apiGroup = entry['apiGroup'] === undefined ? undefined : string(entry['apiGroup'], `${at}.apiGroup`);
  const matchContains = entry['matchContains'] === undefined ? undefined : strings(entry['matchContains'], `${at}.matchContains`);
  const matchScopes =
    entry['matchScopes'] === undefined
      ? undefined
      : list(entry['matchScopes'], `${at}.matchScopes`).map((scope, index) => scopeRequirement(scope, `${at}.matchScopes[${index}]`));
  return {
    ...(apiGroup ? { apiGroup } : {}),
    resource,
    ...(matchContains ? { matchContains } : {}),
    ...(matchScopes ? { matchScopes } : {}),
  };
}

/** A ScopedResourceSelectorRequirement as a quota's scopeSelector takes it. */
function scopeRequirement(raw: unknown, at: string): ScopeRequirementConfig {
  const requirement = object(raw, at, ['scopeName', 'operator', 'values']);
  const scopeName = string(requirement['scopeName'], `${at}.scopeName`);
  if (!QUOTA_SCOPES.includes(scopeName))
    throw new FieldProblem(`${at}.scopeName`, `unsupported scope "${scopeName}": must be one of ${QUOTA_SCOPES.join(', ')}`);
  const operator = string(requirement['operator'], `${at}.operator`);
  const values = requirement['values'] === undefined ? [] : strings(requirement['values'], `${at}.values`);
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) throw new FieldProblem(`${at}.values`, `must be at least one value when operator is ${operator}`);
      return { scopeName, operator, values };
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) throw new FieldProblem(`${at}.values`, `must be empty when operator is ${operator}`);
      return { scopeName, operator };
    default:
      throw new FieldProblem(`${at}.operator`, `must be In, NotIn, Exists or DoesNotExist, got "${operator}"`);
  }
}

function object(raw: unknown, at: string, fields: readonly string[]): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new FieldProblem(at, 'must be an object');
  const record = raw as Record<string, unknown>;
  const unknown = Object.keys(record).find((key) => !fields.includes(key));
  // Strict, unlike kube-apiserver's decoder: a misspelt field would otherwise configure nothing.
  if (unknown !== undefined) throw new FieldProblem(child(at, unknown), `unknown field (known: ${fields.join(', ')})`);
  return record;
}

/** apiVersion one of `versions`, and the kind that version names. */
function typeOf(record: Record<string, unknown>, at: string, versions: readonly string[], kindOf: (version: string) => string): void {
  const apiVersion = string(record['apiVersion'], child(at, 'apiVersion'));
  if (!versions.includes(apiVersion))
    throw new FieldProblem(child(at, 'apiVersion'), `must be ${versions.join(' or ')}, got "${apiVersion}"`);
  const kind = string(record['kind'], child(at, 'kind'));
  if (kind !== kindOf(apiVersion))
    throw new FieldProblem(child(at, 'kind'), `must be ${kindOf(apiVersion)} for ${apiVersion}, got "${kind}"`);
}

function list(raw: unknown, at: string): unknown[] {
  if (!Array.isArray(raw)) throw new FieldProblem(at, raw === undefined || raw === null ? 'Required value: a list' : 'must be a list');
  return raw;
}

function string(raw: unknown, at: string): string {
  if (typeof raw !== 'string') throw new FieldProblem(at, raw === undefined || raw === null ? 'Required value' : 'must be a string');
  return raw;
}

function strings(raw: unknown, at: string): string[] {
  return list(raw, at).map((item, index) => string(item, `${at}[${index}]`));
}
