import { Resources, type NamespaceState } from '@quota/domain';
import { quotaStateOf, type HeadJson } from '../head.js';
import type { DecisionView, EventView, LimitRangeView, QuotaView, ReservationView } from '../ledger.types.js';
import type { DecisionRow, EventRow, ReservationRecord } from '../rows.js';

/** How the ledger's rows and states are shown through the API: plain JSON, times in RFC 3339. */

const iso = (ms: number): string => new Date(ms).toISOString();

export function eventView(row: EventRow): EventView {
  return {
    position: row.position,
    version: Number(row.version),
    type: row.type,
    time: row.recorded_at.toISOString(),
    actor: row.actor,
    ...(row.on_behalf_of === null ? {} : { onBehalfOf: row.on_behalf_of }),
    ...(row.request_id === null ? {} : { requestId: row.request_id }),
    data: row.data,
  };
}

export function decisionViewOf(namespace: string, r: DecisionRow): DecisionView {
  return {
    id: r.id,
    namespace,
    time: r.decided_at.toISOString(),
    source: r.source,
    ...(r.request_key === null ? {} : { requestKey: r.request_key }),
    operation: r.operation,
    resource: r.resource,
    ...(r.kind === null ? {} : { kind: r.kind }),
    ...(r.name === null ? {} : { name: r.name }),
    ...(r.object_uid === null ? {} : { objectUid: r.object_uid }),
    requester: r.requester,
    ...(r.on_behalf_of === null ? {} : { onBehalfOf: r.on_behalf_of }),
    dryRun: r.dry_run,
    allowed: r.allowed,
    result: r.result,
  };
}

/** A reservation as the API shows it (without its history). */
export function reservationViewOf(namespace: string, record: ReservationRecord): ReservationView {
  const r = record.json;
  return {
    id: r.id,
    namespace,
    state: record.status,
    operation: r.operation,
    origin: record.origin,
    object: r.object,
    charged: r.contribution,
    reservedAt: iso(r.reservedAt),
    ...(r.committedAt === undefined ? {} : { committedAt: iso(r.committedAt) }),
    ...(r.terminatedAt === undefined ? {} : { terminatedAt: iso(r.terminatedAt) }),
    ...(record.releasedAt === undefined ? {} : { releasedAt: iso(record.releasedAt) }),
    ...(record.releaseReason === undefined ? {} : { releaseReason: record.releaseReason }),
    ...(r.expiresAt === undefined ? {} : { expiresAt: iso(r.expiresAt) }),
    ...(record.requestId === undefined ? {} : { requestId: record.requestId }),
  };
}

/** A quota of a state (the write path's answer: the usage the write itself saw); undefined when there is none of that name. */
export function quotaViewOfState(namespace: string, state: NamespaceState, name: string): QuotaView | undefined {
  const quota = state.quotas.get(name);
  if (!quota) return undefined;
  return {
    namespace,
    definition: quota.definition,
    version: quota.version,
    createdAt: iso(quota.createdAt),
    updatedAt: iso(quota.updatedAt),
    hard: Resources.canonicalResourceList(quota.hard),
    used: Resources.canonicalResourceList(state.used.get(name) ?? Resources.EMPTY),
  };
}

/** A quota as the head row holds it. */
export function quotaViewOfHead(namespace: string, entry: HeadJson['quotas'][number]): QuotaView {
  const quota = quotaStateOf(entry);
  return {
    namespace,
    definition: entry.definition,
    version: entry.version,
    createdAt: iso(entry.createdAt),
    updatedAt: iso(entry.updatedAt),
    hard: Resources.canonicalResourceList(quota.hard),
    used: entry.used,
  };
}

export function limitRangeViewOfState(namespace: string, state: NamespaceState, name: string): LimitRangeView | undefined {
  const lr = state.limitRanges.get(name);
  if (!lr) return undefined;
  return { namespace, definition: lr.definition, version: lr.version, createdAt: iso(lr.createdAt), updatedAt: iso(lr.updatedAt) };
}

export function limitRangeViewOfHead(namespace: string, entry: HeadJson['limitRanges'][number]): LimitRangeView {
  return {
    namespace,
    definition: entry.definition,
    version: entry.version,
    createdAt: iso(entry.createdAt),
    updatedAt: iso(entry.updatedAt),
  };
}

/**
 * What a change changed: for a quota, the hard resources whose limit differs (plus `scopes`
 * or `scopeSelector` when those changed); for a limit range, the limit types that differ.
 */
export function changedKeys(
  kind: 'quota' | 'limitRange',
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
): string[] {
  if (kind === 'quota') {
    const hardBefore = (before?.['hard'] ?? {}) as Record<string, string>;
    const hardAfter = (after?.['hard'] ?? {}) as Record<string, string>;
    const names = [...new Set([...Object.keys(hardBefore), ...Object.keys(hardAfter)])].sort();
    const changed = names.filter((n) => hardBefore[n] !== hardAfter[n]);
    for (const field of ['scopes', 'scopeSelector']) {
      if (JSON.stringify(before?.[field] ?? null) !== JSON.stringify(after?.[field] ?? null)) changed.push(field);
    }
    return changed;
  }
  const byType = (spec: Record<string, unknown> | undefined) =>
    new Map(((spec?.['limits'] ?? []) as { type: string }[]).map((l) => [l.type, JSON.stringify(l)] as const));
  const a = byType(before);
  const b = byType(after);
  return [...new Set([...a.keys(), ...b.keys()])].sort().filter((t) => a.get(t) !== b.get(t));
}
