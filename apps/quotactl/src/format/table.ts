import type { DecisionView } from '../api-types.js';

/**
 * kubectl lays out every table with Go's text/tabwriter; this is its algorithm, so columns
 * line up exactly as kubectl's do: a column is as wide as its widest cell plus the padding,
 * computed per *block* of consecutive lines that have a cell in that column (a line with fewer
 * cells ends the block, which is why a describe's scope help line resets the alignment).
 */

export interface TabwriterOptions {
  /** Smallest width of a column, padding included. */
  readonly minWidth: number;
  /** Spaces added to the widest cell of a column. */
  readonly padding: number;
}

/** `kubectl get`'s printer: printers.GetNewTabWriter (minwidth 6, padding 3). */
export const GET_TABLE: TabwriterOptions = { minWidth: 6, padding: 3 };
/** `kubectl describe`'s tabbedString (minwidth 0, padding 2). */
export const DESCRIBE_TABLE: TabwriterOptions = { minWidth: 0, padding: 2 };

/** Go counts a cell's width in runes, not UTF-16 code units. */
const width = (text: string): number => [...text].length;

/**
 * Lays out lines of cells. Every cell but the last of a line is a column cell (in Go terms,
 * tab-terminated); the last one is free text that is never padded. Trailing blanks are trimmed
 * (kubectl leaves them after an empty last column; nobody wants them in a diff).
 */
export function tabwrite(lines: ReadonlyArray<readonly string[]>, options: TabwriterOptions): string {
  const widths: number[] = [];
  const out: string[] = [];

  const writeLines = (from: number, to: number): void => {
    for (let i = from; i < to; i++) {
      const line = lines[i] ?? [];
      let text = '';
      line.forEach((cell, j) => {
        text += cell;
        const columnWidth = widths[j];
        if (columnWidth !== undefined && j < line.length - 1) text += ' '.repeat(Math.max(0, columnWidth - width(cell)));
      });
      out.push(text.trimEnd());
    }
  };

  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    let start = line0;
    for (let i = line0; i < line1; i++) {
      if (column >= (lines[i]?.length ?? 0) - 1) continue;
      // A block of lines with a cell in this column begins here.
      writeLines(start, i);
      start = i;
      let columnWidth = options.minWidth;
      for (; i < line1; i++) {
        const line = lines[i] ?? [];
        if (column >= line.length - 1) break;
        columnWidth = Math.max(columnWidth, width(line[column] ?? '') + options.padding);
      }
      widths.push(columnWidth);
      format(start, i);
      widths.pop();
      start = i;
    }
    writeLines(start, line1);
  };

  format(0, lines.length);
  return out.length ? `${out.join('\n')}\n` : '';
}

/** A `kubectl get`-style table: upper-case header, then one row per item. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  return tabwrite([header, ...rows], GET_TABLE);
}

/**
 * kubectl's AGE column (apimachinery's duration.HumanDuration): two significant units while
 * they matter, one after. `<unknown>` without a timestamp, `<invalid>` for one in the future
 * beyond clock skew.
 */
export function age(timestamp: string | undefined, now: number): string {
  const at = timestamp ? Date.parse(timestamp) : Number.NaN;
  if (Number.isNaN(at)) return '<unknown>';
  const seconds = Math.trunc((now - at) / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  const years = Math.trunc(hours / 24 / 365);
  const days = Math.trunc(hours / 24) % 365;
  if (hours < 24 * 365 * 8) return days === 0 ? `${years}y` : `${years}y${days}d`;
  return `${years}y`;
}

/** `name=quantity, …` in name order: how resource lists read in one table cell. */
export function resourceList(list: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(list ?? {})
    .sort()
    .map((name) => `${name}=${list?.[name] ?? ''}`)
    .join(', ');
}

// ---------------------------------------------------------------------------------------------
// The tables each command prints. Pure: the answer and the clock come in.

type Quantities = Readonly<Record<string, string>>;

interface Named {
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly creationTimestamp?: string };
}

/** `-A`: kubectl's NAMESPACE column before the others. */
export interface TableOptions {
  readonly allNamespaces?: boolean;
}

function namespaced(
  options: TableOptions,
  header: readonly string[],
  items: readonly Named[],
  rows: ReadonlyArray<readonly string[]>,
): string {
  if (!options.allNamespaces) return table(header, rows);
  return table(
    ['NAMESPACE', ...header],
    rows.map((row, i) => [items[i]?.metadata?.namespace ?? '', ...row]),
  );
}

/** Go's sort.Strings order (bytes), not the locale's. */
const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * `kubectl get quota`: REQUEST holds every resource but `limits.*`, LIMIT the `limits.*` ones,
 * each as `name: used/hard` (printers.go printResourceQuota).
 */
export function quotaTable(
  quotas: ReadonlyArray<
    Named & { readonly spec?: { readonly hard?: Quantities }; readonly status?: { readonly hard?: Quantities; readonly used?: Quantities } }
  >,
  now: number,
  options: TableOptions = {},
): string {
  const rows = quotas.map((quota) => {
    const hard = quota.status?.hard ?? quota.spec?.hard ?? {};
    const request: string[] = [];
    const limit: string[] = [];
    for (const name of Object.keys(hard).sort(byteOrder)) {
      const pieces = name.split('.');
      (pieces.length > 1 && pieces[0] === 'limits' ? limit : request).push(
        `${name}: ${quota.status?.used?.[name] ?? '0'}/${hard[name] ?? ''}`,
      );
    }
    return [quota.metadata?.name ?? '', age(quota.metadata?.creationTimestamp, now), request.join(', '), limit.join(', ')];
  });
  return namespaced(options, ['NAME', 'AGE', 'REQUEST', 'LIMIT'], quotas, rows);
}

/** `kubectl get limitrange`: NAME and CREATED AT (RFC 3339 in UTC, whole seconds, as Go prints it). */
export function limitRangeTable(ranges: readonly Named[], options: TableOptions = {}): string {
  const created = (timestamp: string | undefined): string => {
    const at = timestamp ? Date.parse(timestamp) : Number.NaN;
    return Number.isNaN(at) ? '<unknown>' : new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
  };
  return namespaced(
    options,
    ['NAME', 'CREATED AT'],
    ranges,
    ranges.map((range) => [range.metadata?.name ?? '', created(range.metadata?.creationTimestamp)]),
  );
}

/** One namespace of `GET /v1/namespaces`: its quotas (hard and used, exact) and the one closest to its limit. */
export interface NamespaceSummaryRow {
  readonly namespace: string;
  readonly quotas?: ReadonlyArray<{ readonly name: string; readonly hard?: Quantities; readonly used?: Quantities }>;
  readonly tightest?: { readonly quota: string; readonly resource: string; readonly ratio?: number };
}

/**
 * `quotactl get namespaces`: NAME, QUOTAS (how many the namespace has) and TIGHTEST, the resource
 * closest to (or furthest over) its hard limit as `quota: resource used/hard`, `<none>` without
 * quotas. The namespaces the ledger holds, in name order as the server lists them.
 */
export function namespacesTable(namespaces: readonly NamespaceSummaryRow[]): string {
  const rows = namespaces.map((ns) => {
    const tight = ns.tightest;
    const quota = tight ? ns.quotas?.find((q) => q.name === tight.quota) : undefined;
    const cell = tight
      ? `${tight.quota}: ${tight.resource} ${quota?.used?.[tight.resource] ?? '0'}/${quota?.hard?.[tight.resource] ?? '?'}`
      : '<none>';
    return [ns.namespace, String(ns.quotas?.length ?? 0), cell];
  });
  return table(['NAME', 'QUOTAS', 'TIGHTEST'], rows);
}

/** `quotactl usage`: one row per quota and resource, quotas and resources in name order. */
export function usageTable(
  quotas: ReadonlyArray<{ readonly name: string; readonly hard?: Quantities; readonly used?: Quantities }>,
): string {
  const rows = [...quotas]
    .sort((a, b) => byteOrder(a.name, b.name))
    .flatMap((quota) =>
      Object.keys(quota.hard ?? {})
        .sort(byteOrder)
        .map((resource) => [quota.name, resource, quota.used?.[resource] ?? '0', quota.hard?.[resource] ?? '']),
    );
  return table(['QUOTA', 'RESOURCE', 'USED', 'HARD'], rows);
}

/** `quotactl usage clusterresourcequota NAME`: the total over its namespaces, then each namespace's part. */
export function sharedUsageTable(usage: {
  readonly hard?: Quantities;
  readonly used?: Quantities;
  readonly namespaces?: ReadonlyArray<{ readonly namespace: string; readonly used?: Quantities }>;
}): string {
  const resources = Object.keys(usage.hard ?? {}).sort(byteOrder);
  const rows = [
    ...resources.map((resource) => ['(all)', resource, usage.used?.[resource] ?? '0', usage.hard?.[resource] ?? '']),
    ...[...(usage.namespaces ?? [])]
      .sort((a, b) => byteOrder(a.namespace, b.namespace))
      .flatMap((member) => resources.map((resource) => [member.namespace, resource, member.used?.[resource] ?? '0', ''])),
  ];
  return table(['NAMESPACE', 'RESOURCE', 'USED', 'HARD'], rows);
}

interface EventRow {
  readonly position: string;
  readonly type: string;
  readonly time: string;
  readonly actor?: string;
  readonly data?: unknown;
}

/** `quotactl history`: the ledger's events in stream order. */
export function historyTable(events: readonly EventRow[]): string {
  return table(
    ['POSITION', 'TIME', 'TYPE', 'ACTOR', 'SUMMARY'],
    events.map((event) => [event.position, event.time, event.type, event.actor ?? '', eventSummary(event.type, event.data)]),
  );
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const quantities = (value: unknown): Quantities =>
  Object.fromEntries(Object.entries(record(value)).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));

/** `pods/web-1`: what a reservation is for, as kubectl names objects (kind, else resource). */
function objectName(ref: unknown): string {
  const object = record(ref);
  const type = (str(object['kind']) ?? str(object['resource']) ?? 'object').toLowerCase();
  return `${type}/${str(object['name']) ?? str(object['uid']) ?? '<unnamed>'}`;
}

/** One line per event: what changed, in the words an operator would use. */
export function eventSummary(type: string, data: unknown): string {
  const d = record(data);
  const id = str(d['reservationId']) ?? '';
  switch (type) {
    case 'QuotaDefined':
    case 'QuotaChanged':
      return `resourcequota/${str(d['name']) ?? ''} hard: ${resourceList(quantities(record(d['spec'])['hard']))}`;
    case 'QuotaRemoved':
      return `resourcequota/${str(d['name']) ?? ''}`;
    case 'LimitRangeDefined':
    case 'LimitRangeChanged': {
      const limits = record(d['spec'])['limits'];
      const types = Array.isArray(limits) ? limits.map((item) => str(record(item)['type']) ?? '?') : [];
      return `limitrange/${str(d['name']) ?? ''} limits: ${types.join(', ') || 'none'}`;
    }
    case 'LimitRangeRemoved':
      return `limitrange/${str(d['name']) ?? ''}`;
    case 'Reserved': {
      const expires = str(d['expiresAt']);
      return `${id} ${str(d['operation']) ?? ''} ${objectName(d['object'])} charged: ${resourceList(quantities(d['charged'])) || 'nothing'}${expires ? ` expires: ${expires}` : ''}`;
    }
    case 'Committed':
      return id;
    case 'Released':
      return `${id} (${str(d['reason']) ?? 'released'})`;
    case 'Terminated':
      return `${id} (${str(d['reason']) ?? 'terminal'}) keeps: ${resourceList(quantities(d['usage'])) || 'nothing'}`;
    case 'Adopted':
      return `${id} ${objectName(d['object'])} usage: ${resourceList(quantities(d['usage'])) || 'nothing'}`;
    default:
      return queueEventSummary(type, d, id) ?? newerEvent(data);
  }
}

/** The queue's events: why a reservation waited, until when, and whose freed room admitted it. */
function queueEventSummary(type: string, d: Record<string, unknown>, id: string): string | undefined {
  switch (type) {
    case 'Queued': {
      const quotas = Array.isArray(d['waitingFor']) ? d['waitingFor'].map((w) => str(record(w)['quota']) ?? '?') : [];
      const priority = typeof d['priority'] === 'number' ? d['priority'] : 0;
      return `${id} ${objectName(d['object'])} waits for: ${resourceList(quantities(d['resources']))} priority: ${priority} until: ${str(d['deadline']) ?? '?'} short in: ${quotas.join(', ') || '?'}`;
    }
    case 'AdmittedFromQueue': {
      const freed = record(d['freedBy']);
      const by = str(freed['type']);
      return `${id} ${by ? `admitted by the room ${by} (version ${String(freed['version'] ?? '?')}) freed` : 'admitted by the sweep'}`;
    }
    case 'Cancelled':
      return `${id} (cancelled while it waited)`;
    case 'Expired':
      return `${id} (${str(d['reason']) ?? 'expired while it waited'})`;
    default:
      return undefined;
  }
}

/** An event type newer than this CLI: its data rather than nothing. */
function newerEvent(data: unknown): string {
  const text = JSON.stringify(data) ?? '';
  return text.length > 100 ? `${text.slice(0, 99)}…` : text;
}

/**
 * `quotactl decisions`: REASON is the admission plugin that refused (ResourceQuota or
 * LimitRanger), MESSAGE the API server's wording of the refusal, or for an allowance what it charged.
 */
export function decisionsTable(decisions: readonly DecisionView[]): string {
  return table(
    ['TIME', 'ALLOWED', 'DRY-RUN', 'KIND', 'NAME', 'OPERATION', 'REQUESTER', 'REASON', 'MESSAGE'],
    decisions.map((d) => {
      const charged = resourceList(d.result?.charged);
      // A dry run reserved nothing: its own column, so a denial that never happened is not read as one.
      const message = d.allowed ? (charged ? `${d.dryRun ? 'would charge' : 'charged'}: ${charged}` : '') : (d.result?.message ?? '');
      return [
        d.time,
        String(d.allowed),
        String(d.dryRun === true),
        d.kind ?? d.resource ?? '',
        d.name ?? '<none>',
        d.operation ?? '',
        `${d.requester ?? ''}${d.onBehalfOf ? ` (for ${d.onBehalfOf})` : ''}`,
        d.allowed ? '' : (d.result?.stage ?? ''),
        oneLine(message),
      ];
    }),
  );
}

/** A table cell must not break the row. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
