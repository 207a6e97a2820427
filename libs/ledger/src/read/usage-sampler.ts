import { assert, eventTypesNeeding, fold, initialState, type NamespaceState } from '@quota/domain';
import type { DataSource } from 'typeorm';
import { headOf, reservationFromJson, stateOf, type HeadJson, type ReservationJson } from '../head.js';
import type { UsagePoint } from '../ledger.types.js';
import { decodeEvent, FOLD_COLUMNS, type FoldRow } from '../rows.js';
import { FOLD_START, LAST_EVENT_AT } from '../archive/retention.js';

/**
 * Queries of one series in flight at once (chains are folded side by side, and each reads
 * its next page while folding the last). The pool (8 connections by default) also serves
 * admissions, so a chart must not take it over.
 */
const SERIES_QUERIES_CONCURRENT_MAX = 4;

/**
 * Events read per query while folding a chain: with no snapshot yet a chain folds from the
 * stream's start, so this, not the range, bounds the rows held at once.
 */
const SERIES_EVENTS_PAGE_MAX = 2000;

/** Events a fold can apply with only the reservations they name (reservationsNeededBy). */
const PARTIAL_TYPES = [...eventTypesNeeding('named'), ...eventTypesNeeding('none')];
/** Events that name a reservation: the ones to load. */
const NAMING_TYPES = eventTypesNeeding('named');

type Quotas = UsagePoint['quotas'];

/** Versions folded in one pass from one snapshot (0: the empty stream), ascending. */
interface Chain {
  readonly snapshot: number;
  readonly versions: number[];
}

export type Query = <R>(sql: string, values: readonly unknown[]) => Promise<R[]>;

/**
 * Usage at many instants of one namespace (one point per instant, same order), each exactly
 * what `UsageQueries.usageAt` answers for it, without paying a whole `usageAt` per instant. The
 * namespace must exist.
 *
 * `usageAt` folds, from the newest snapshot at or below the instant's version, the events up
 * to that version. Here one query finds every instant's version and snapshot; the instants
 * that share a snapshot form a chain, folded once from it, with the usage captured as the
 * fold passes each of their versions. So each point is `usageAt`'s fold, from the same
 * snapshot over the same events, and the work is bounded both ways: points closer than a
 * snapshot interval share one pass (a range holding few events is read once), and points
 * further apart cost at most an interval of events each, however long the history.
 *
 * A snapshot holds every live reservation (for a busy namespace, more bytes than an interval
 * of events), but only those the chain's events name can change the quota totals, which
 * come with the snapshot: a chain loads just those, unless one of its events recounts usage
 * (see reservationsNeededBy).
 */
export async function sampleUsage(dataSource: DataSource, namespace: string, instants: readonly string[]): Promise<UsagePoint[]> {
  const samples = await sampleStates(boundedQuery(dataSource, SERIES_QUERIES_CONCURRENT_MAX), namespace, instants, quotasOf);
  return samples.map(({ at, version, value }) => ({ at, version, quotas: value ?? [] }));
}

/** One instant's sample: the stream version in force then (0 before the first event), and what `capture` read from the state at it (undefined at version 0). */
export interface StateSample<T> {
  readonly at: string;
  readonly version: number;
  readonly value: T | undefined;
}

/**
 * What `capture` reads from a namespace's state at each instant (as sampleUsage, whose fold it
 * is), through `query`: a shared quota's series samples many namespaces through one limit.
 */
export async function sampleStates<T>(
  query: Query,
  namespace: string,
  instants: readonly string[],
  capture: (state: NamespaceState) => T,
): Promise<StateSample<T>[]> {
  // Per instant: the last event recorded at or before it (as usageAt picks it) and the newest
  // snapshot or horizon state at or below that event (where the fold starts). Instants before
  // the first event have no row: version 0.
  const rows = await query<{ ord: string; version: string; snapshot: string | null }>(
    `SELECT i.ord::text AS ord, t.version::text AS version, (SELECT f.version FROM (${FOLD_START('t.version')}) AS f)::text AS snapshot
       FROM unnest($2::timestamptz[]) WITH ORDINALITY AS i(at, ord)
       CROSS JOIN LATERAL (${LAST_EVENT_AT}) t`,
    [namespace, instants],
  );
  const versions = new Array<number>(instants.length).fill(0);
  const bySnapshot = new Map<number, Set<number>>();
  for (const row of rows) {
    const version = Number(row.version);
    versions[Number(row.ord) - 1] = version;
    const snapshot = Number(row.snapshot ?? 0);
    bySnapshot.set(snapshot, (bySnapshot.get(snapshot) ?? new Set<number>()).add(version));
  }
  const chains = [...bySnapshot].map(([snapshot, chain]): Chain => ({ snapshot, versions: [...chain].sort((a, b) => a - b) }));
  const valueAt = new Map<number, T>();
  await forEachBounded(chains, SERIES_QUERIES_CONCURRENT_MAX, async (chain) => {
    for (const [version, value] of await foldChain(query, namespace, chain, capture)) valueAt.set(version, value);
  });
  return instants.map((at, i) => {
    const version = versions[i] ?? 0;
    assert(version === 0 || valueAt.has(version), `the state at version ${version} was captured`);
    return { at, version, value: valueAt.get(version) };
  });
}

/** The usage at each version of the chain: one fold from its snapshot, paged, captured as it passes each. */
async function foldChain<T>(query: Query, namespace: string, chain: Chain, read: (state: NamespaceState) => T): Promise<Map<number, T>> {
  const { versions } = chain;
  const last = versions.at(-1) ?? 0;
  let state = initialState();
  if (chain.snapshot > 0) {
    // The snapshot usageAt picks (should a rebuild have dropped it meanwhile, an older one, or
    // none, gives the same state after a longer fold), with the reservations the fold to
    // `last` touches: all when an event there needs them all.
    const rows = await query<{ version: string; state: HeadJson; reservations: ReservationJson[] }>(
      `SELECT u.version::text AS version, u.state,
              CASE WHEN EXISTS (SELECT 1 FROM ledger_events e WHERE e.namespace = $1 AND e.version > u.version AND e.version <= $3 AND e.type <> ALL($4::text[]))
                   THEN u.reservations
                   ELSE (SELECT coalesce(jsonb_agg(r.value ORDER BY r.ordinality), '[]'::jsonb)
                           FROM jsonb_array_elements(u.reservations) WITH ORDINALITY AS r(value, ordinality)
                          WHERE r.value->>'id' IN (SELECT e.data->>'reservationId' FROM ledger_events e
                                                    WHERE e.namespace = $1 AND e.version > u.version AND e.version <= $3 AND e.type = ANY($5::text[])))
              END AS reservations
         FROM (${FOLD_START('$2')}) AS u`,
      [namespace, chain.snapshot, last, PARTIAL_TYPES, NAMING_TYPES],
    );
    const row = rows[0];
    if (row) state = stateOf(Number(row.version), row.state, row.reservations.map(reservationFromJson));
  }
  const page = (after: number): Promise<FoldRow[]> => {
    const read = query<FoldRow>(
      `SELECT ${FOLD_COLUMNS}
         FROM ledger_events WHERE namespace = $1 AND version > $2 AND version <= $3 ORDER BY ledger_events.version LIMIT ${SERIES_EVENTS_PAGE_MAX}`,
      [namespace, after, last],
    );
    // Awaited below unless the fold throws first; never an unhandled rejection.
    read.catch(() => undefined);
    return read;
  };
  const captured = new Map<number, T>();
  let next = 0;
  const capture = (): void => {
    for (let version = versions[next]; version !== undefined && version <= state.version; version = versions[++next])
      captured.set(version, read(state));
  };
  capture();
  let pending = state.version < last ? page(state.version) : undefined;
  while (pending) {
    const rows = await pending;
    assert(rows.length > 0, `events ${state.version + 1}..${last} of ${namespace} exist`);
    const readTo = Number(rows.at(-1)?.version);
    // The next page is read while this one is folded.
    pending = readTo < last ? page(readTo) : undefined;
    const events = rows.map(decodeEvent);
    // Fold the page in stretches that end at the versions to capture.
    for (let start = 0; start < events.length;) {
      const until = versions[next] ?? last;
      let end = start;
      while (end < events.length && (events[end]?.version ?? Infinity) <= until) end++;
      state = fold(events.slice(start, end), state);
      start = end;
      capture();
    }
  }
  assert(next === versions.length, `the fold of ${namespace} reached version ${last}`);
  return captured;
}

/** A read through the data source, with at most `concurrency` of these queries in flight at once. */
export function boundedQuery(dataSource: DataSource, concurrency: number): Query {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (sql, values) => {
    // A finished query hands its slot to the next waiting one, so none can slip in between.
    if (running < concurrency) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await dataSource.query(sql, [...values]);
    } finally {
      const handOff = waiting.shift();
      if (handOff) handOff();
      else running--;
    }
  };
}

/** The quotas part of usageAt's answer. */
function quotasOf(state: NamespaceState): Quotas {
  return headOf(state).quotas.map((q) => ({ name: q.definition.name, hard: q.definition.spec.hard ?? {}, used: q.used }));
}

/** Runs `run` over `items`, at most `concurrency` at a time; the first failure stops the rest. */
export async function forEachBounded<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next++] as T;
      try {
        await run(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
