import { Quantity } from '@quota/domain';
import { DESCRIBE_TABLE, tabwrite } from './table.js';

type Quantities = Readonly<Record<string, string>>;

interface Meta {
  readonly name?: string;
  readonly namespace?: string;
  readonly creationTimestamp?: string;
}

/** The parts of a ResourceQuota answer the printers read (the server's JSON, untrusted in shape). */
export interface QuotaObject {
  readonly metadata?: Meta;
  readonly spec?: { readonly hard?: Quantities; readonly scopes?: readonly string[] };
  readonly status?: { readonly hard?: Quantities; readonly used?: Quantities };
}

export interface LimitRangeItem {
  readonly type?: string;
  readonly min?: Quantities;
  readonly max?: Quantities;
  readonly default?: Quantities;
  readonly defaultRequest?: Quantities;
  readonly maxLimitRequestRatio?: Quantities;
}

export interface LimitRangeObject {
  readonly metadata?: Meta;
  readonly spec?: { readonly limits?: readonly LimitRangeItem[] };
}

/**
 * kubectl's sentences for the scopes it explains (describe.go's helpTextForResourceQuotaScope);
 * it prints nothing for the others, and neither do we.
 */
const SCOPE_HELP: Readonly<Record<string, string>> = {
  Terminating:
    'Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.',
  NotTerminating:
    'Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.',
  BestEffort: 'Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.',
  NotBestEffort:
    'Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.',
};

/** Go's sort.Strings order (bytes), not the locale's. */
const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * kubectl prints `used` in `hard`'s format when the two differ (`resource.NewQuantity(used.Value(),
 * hard.Format)`), so 1Gi of 2G reads 1073741824, not 1Gi. Text that does not parse is shown as is.
 */
function usedAsHard(used: string | undefined, hard: string): string {
  const hardQuantity = Quantity.tryParse(hard);
  const usedQuantity = used === undefined ? Quantity.ZERO : Quantity.tryParse(used);
  if (!hardQuantity || !usedQuantity) return used ?? '0';
  if (used === undefined || usedQuantity.format !== hardQuantity.format)
    return Quantity.fromInt(usedQuantity.value(), hardQuantity.format).toString();
  return used;
}

/** `kubectl describe quota NAME`: Name, Namespace, Scopes with their meaning, then Resource/Used/Hard. */
export function describeQuota(quota: QuotaObject): string {
  const lines: string[][] = [
    ['Name:', quota.metadata?.name ?? ''],
    ['Namespace:', quota.metadata?.namespace ?? ''],
  ];
  const scopes = [...(quota.spec?.scopes ?? [])].sort(byteOrder);
  if (scopes.length > 0) {
    lines.push(['Scopes:', scopes.join(', ')]);
    for (const scope of scopes) {
      const help = SCOPE_HELP[scope];
      if (help) lines.push([` * ${help}`]);
    }
  }
  lines.push(['Resource', 'Used', 'Hard'], ['--------', '----', '----']);
  const hard = quota.status?.hard ?? quota.spec?.hard ?? {};
  for (const name of Object.keys(hard).sort(byteOrder)) {
    const limit = hard[name] ?? '';
    lines.push([name, usedAsHard(quota.status?.used?.[name], limit), limit]);
  }
  return tabwrite(lines, DESCRIBE_TABLE);
}

const LIMIT_COLUMNS = ['min', 'max', 'defaultRequest', 'default', 'maxLimitRequestRatio'] as const;

/**
 * `kubectl describe limitrange NAME`: one row per type and resource, `-` for a value the item
 * does not set. kubectl lists an item's resources in map order (random); we sort them.
 */
export function describeLimitRange(range: LimitRangeObject): string {
  const lines: string[][] = [
    ['Name:', range.metadata?.name ?? ''],
    ['Namespace:', range.metadata?.namespace ?? ''],
    ['Type', 'Resource', 'Min', 'Max', 'Default Request', 'Default Limit', 'Max Limit/Request Ratio'],
    ['----', '--------', '---', '---', '---------------', '-------------', '-----------------------'],
  ];
  for (const item of range.spec?.limits ?? []) {
    const names = new Set(LIMIT_COLUMNS.flatMap((column) => Object.keys(item[column] ?? {})));
    for (const name of [...names].sort(byteOrder)) {
      lines.push([item.type ?? '', name, ...LIMIT_COLUMNS.map((column) => item[column]?.[name] ?? '-')]);
    }
  }
  return tabwrite(lines, DESCRIBE_TABLE);
}

/** Several descriptions as `kubectl describe` separates them (describe.go: `"\n\n%s"`). */
export function joinDescriptions(descriptions: readonly string[]): string {
  return descriptions.join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// OpenShift's ClusterResourceQuota, as `oc describe clusterresourcequota` prints it
// (openshift/oc pkg/helpers/describe: DescribeClusterQuota over formatMeta).

interface LabelSelectorRequirement {
  readonly key?: string;
  readonly operator?: string;
  readonly values?: readonly string[];
}

interface LabelSelectorObject {
  readonly matchLabels?: Quantities;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** The parts of a ClusterResourceQuota answer `describe` reads. */
export interface ClusterQuotaObject {
  readonly metadata?: Meta & { readonly labels?: Quantities; readonly annotations?: Quantities };
  readonly spec?: {
    readonly selector?: {
      readonly labels?: LabelSelectorObject | null;
      readonly annotations?: Quantities | null;
    };
    readonly quota?: { readonly scopes?: readonly string[] };
  };
  readonly status?: {
    readonly total?: { readonly hard?: Quantities; readonly used?: Quantities };
    readonly namespaces?: readonly { readonly namespace?: string }[];
  };
}

/** docker/go-units HumanDuration, which oc prints ages with ("5 minutes ago"). */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < 1) return 'Less than a second';
  if (seconds === 1) return '1 second';
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes === 1) return 'About a minute';
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(ms / 3_600_000);
  if (hours === 1) return 'About an hour';
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.trunc(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.trunc(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24 / 30)} months`;
  return `${Math.trunc(ms / 3_600_000 / 24 / 365)} years`;
}

/**
 * A LabelSelector as labels.Selector's String() prints it: requirements by key, `k=v`,
 * `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas; `<null>` for no selector (as
 * OpenShift's documentation shows it), the empty string for one that selects everything.
 */
export function labelSelectorString(selector: LabelSelectorObject | null | undefined): string {
  if (!selector) return '<null>';
  const requirements: [string, string][] = [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]): [string, string] => [key, `${key}=${value}`]),
    ...(selector.matchExpressions ?? []).map((r): [string, string] => {
      const key = r.key ?? '';
      const values = [...(r.values ?? [])].sort(byteOrder).join(',');
      switch (r.operator) {
        case 'In':
          return [key, `${key} in (${values})`];
        case 'NotIn':
          return [key, `${key} notin (${values})`];
        case 'Exists':
          return [key, key];
        default:
          return [key, `!${key}`];
      }
    }),
  ];
  return requirements
    .sort(([a], [b]) => byteOrder(a, b))
    .map(([, text]) => text)
    .join(',');
}

/** A Go map[string]string as fmt's %s prints it: `map[k1:v1 k2:v2]`, keys sorted. */
function goMap(map: Quantities | null | undefined): string {
  return `map[${Object.keys(map ?? {})
    .sort(byteOrder)
    .map((key) => `${key}:${map?.[key] ?? ''}`)
    .join(' ')}]`;
}

/** formatMapStringString: `<none>`, or `k=v` with further keys on lines of their own. */
function mapLines(label: string, map: Quantities | undefined): string[][] {
  const keys = Object.keys(map ?? {}).sort(byteOrder);
  if (keys.length === 0) return [[`${label}:`, '<none>']];
  return keys.map((key, i) => [i === 0 ? `${label}:` : '', `${key}=${map?.[key] ?? ''}`]);
}

/** `oc describe clusterresourcequota NAME`. */
export function describeClusterQuota(quota: ClusterQuotaObject, now: number): string {
  const meta = quota.metadata ?? {};
  const created = meta.creationTimestamp ? Date.parse(meta.creationTimestamp) : Number.NaN;
  const { description, ...annotations } = meta.annotations ?? {};
  const namespaces = (quota.status?.namespaces ?? []).map((n) => JSON.stringify(n.namespace ?? ''));
  const hard = quota.status?.total?.hard ?? {};
  const scopes = [...(quota.spec?.quota?.scopes ?? [])].sort(byteOrder);
  const lines: string[][] = [
    ['Name:', meta.name || '<none>'],
    ['Namespace:', meta.namespace || '<none>'],
    ...(Number.isNaN(created) ? [] : [['Created:', `${humanDuration(now - created)} ago`]]),
    ...mapLines('Labels', meta.labels),
    ...(description ? [['Description:', description]] : []),
    ...mapLines('Annotations', annotations),
    [`Namespace Selector: [${namespaces.join(' ')}]`],
    [`Label Selector: ${labelSelectorString(quota.spec?.selector?.labels)}`],
    [`AnnotationSelector: ${goMap(quota.spec?.selector?.annotations)}`],
    ...(scopes.length > 0 ? [['Scopes:', scopes.join(', ')]] : []),
    ['Resource', 'Used', 'Hard'],
    ['--------', '----', '----'],
    ...Object.keys(hard)
      .sort(byteOrder)
      .map((name) => [name, quota.status?.total?.used?.[name] ?? '0', hard[name] ?? '']),
  ];
  return tabwrite(lines, DESCRIBE_TABLE);
}
