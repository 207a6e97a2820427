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
  Terminating: 'Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.',
  NotTerminating: 'Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.',
  BestEffort: 'Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.',
  NotBestEffort: 'Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.',
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
  if (used === undefined || usedQuantity.format !== hardQuantity.format) return Quantity.fromInt(usedQuantity.value(), hardQuantity.format).toString();
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
