/** Columns padded to their widest cell, three spaces apart, as kubectl prints tables. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, gap = 3): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + gap)))
      .join('')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

type Quantities = Readonly<Record<string, string>>;

export interface QuotaObject {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly creationTimestamp?: string };
  readonly spec?: { readonly hard?: Quantities; readonly scopes?: readonly string[]; readonly scopeSelector?: { readonly matchExpressions?: ReadonlyArray<{ scopeName: string; operator: string; values?: string[] }> } };
  readonly status?: { readonly hard?: Quantities; readonly used?: Quantities };
}

/** Kubernetes' own sentences for each scope (kubectl describe prints them). */
const SCOPE_HELP: Readonly<Record<string, string>> = {
  Terminating: 'Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.',
  NotTerminating: 'Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.',
  BestEffort: 'Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.',
  NotBestEffort: 'Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.',
  PriorityClass: 'Matches all pods that have a priority class set.',
  CrossNamespacePodAffinity: 'Matches all pods that have cross-namespace pod (anti)affinity terms.',
  VolumeAttributesClass: 'Matches all PersistentVolumeClaims that have a VolumeAttributesClass set.',
};

/** `kubectl describe quota`: name, namespace, scopes with their meaning, then Resource/Used/Hard. */
export function describeQuota(quota: QuotaObject): string {
  const hard = quota.status?.hard ?? quota.spec?.hard ?? {};
  const used = quota.status?.used ?? {};
  const lines = [`Name:${' '.repeat(12)}${quota.metadata.name}`, `Namespace:${' '.repeat(7)}${quota.metadata.namespace ?? ''}`];
  const scopes = quota.spec?.scopes ?? [];
  if (scopes.length) {
    lines.push(`Scopes:${' '.repeat(10)}${scopes.join(', ')}`);
    for (const scope of scopes) if (SCOPE_HELP[scope]) lines.push(` * ${SCOPE_HELP[scope]}`);
  }
  for (const expression of quota.spec?.scopeSelector?.matchExpressions ?? []) {
    lines.push(`Scope Selector:  ${expression.scopeName} ${expression.operator}${expression.values?.length ? ` [${expression.values.join(', ')}]` : ''}`);
  }
  const names = Object.keys(hard).sort();
  const rows = [['--------', '----', '----'], ...names.map((name) => [name, used[name] ?? '0', hard[name] ?? ''])];
  return `${lines.join('\n')}\n${table(['Resource', 'Used', 'Hard'], rows, 2)}`;
}

/** `kubectl get quota`: REQUEST holds every resource but limits.*, LIMIT the limits.* ones, as used/hard. */
export function getQuotaRows(quotas: readonly QuotaObject[], now: number): string {
  const pairs = (q: QuotaObject, limits: boolean): string => {
    const hard = q.status?.hard ?? q.spec?.hard ?? {};
    return Object.keys(hard)
      .filter((name) => name.startsWith('limits.') === limits)
      .sort()
      .map((name) => `${name}: ${q.status?.used?.[name] ?? '0'}/${hard[name]}`)
      .join(', ');
  };
  return table(
    ['NAME', 'AGE', 'REQUEST', 'LIMIT'],
    quotas.map((q) => [q.metadata.name, age(q.metadata.creationTimestamp, now), pairs(q, false), pairs(q, true)]),
  );
}

/** kubectl's age: the two largest units, e.g. 5m12s, 3h4m, 12d. */
export function age(timestamp: string | undefined, now: number): string {
  const at = timestamp ? Date.parse(timestamp) : NaN;
  if (Number.isNaN(at)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - at) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

export interface LimitRangeObject {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly creationTimestamp?: string };
  readonly spec?: {
    readonly limits?: ReadonlyArray<{
      readonly type: string;
      readonly min?: Quantities;
      readonly max?: Quantities;
      readonly default?: Quantities;
      readonly defaultRequest?: Quantities;
      readonly maxLimitRequestRatio?: Quantities;
    }>;
  };
}

/** `kubectl describe limitrange`: one row per type and resource, `-` where a column has no value. */
export function describeLimitRange(range: LimitRangeObject): string {
  const rows: string[][] = [['----', '--------', '---', '---', '---------------', '-------------', '-----------------------']];
  for (const item of range.spec?.limits ?? []) {
    const names = new Set([...Object.keys(item.min ?? {}), ...Object.keys(item.max ?? {}), ...Object.keys(item.default ?? {}), ...Object.keys(item.defaultRequest ?? {}), ...Object.keys(item.maxLimitRequestRatio ?? {})]);
    for (const name of [...names].sort()) {
      rows.push([item.type, name, item.min?.[name] ?? '-', item.max?.[name] ?? '-', item.defaultRequest?.[name] ?? '-', item.default?.[name] ?? '-', item.maxLimitRequestRatio?.[name] ?? '-']);
    }
  }
  const head = `Name:${' '.repeat(7)}${range.metadata.name}\nNamespace:  ${range.metadata.namespace ?? ''}\n`;
  return head + table(['Type', 'Resource', 'Min', 'Max', 'Default Request', 'Default Limit', 'Max Limit/Request Ratio'], rows, 1);
}
