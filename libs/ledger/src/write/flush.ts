import { assert } from '@quota/domain';
import type pg from 'pg';
import { flushStatement, type FlushPlan, type FlushRow } from './flush-statement.js';
import { VersionConflict } from '../database/postgres-errors.js';
import type { SharedHeads } from '../shared-heads.js';
import type { NamespaceUnitOfWork } from './unit-of-work.js';

/**
 * Writes every namespace's part, and the shared heads they moved, in one statement; throws
 * VersionConflict, to roll all back, if a head was not where it was read. Returns the position
 * of the last event written (undefined when none was), and tells each unit of work its
 * decisions' ids and its events' positions.
 */
export async function flushWorks(
  client: pg.ClientBase,
  works: readonly NamespaceUnitOfWork[],
  now: number,
  shared: SharedHeads,
): Promise<string | undefined> {
  const planned = works
    .map((work) => ({ work, plan: work.plan() }))
    .filter((p): p is { work: NamespaceUnitOfWork; plan: FlushPlan } => p.plan !== undefined);
  const sharedPlans = shared.plans();
  const statement = flushStatement(
    planned.map((p) => p.plan),
    now,
    sharedPlans,
  );
  if (!statement) return undefined;
  const row = (await client.query<FlushRow>(statement)).rows[0];
  assert(row, 'the write statement returns one row');
  const moving = planned.filter((p) => p.plan.events.length > 0);
  if (row.head_rows !== moving.length + sharedPlans.length) {
    const first = moving[0]?.plan;
    throw new VersionConflict(first?.namespace ?? '', first?.base.version ?? 0);
  }
  // Identity values are drawn in insertion order, which follows ORDER BY ord: the plans' order.
  const ids = row.ids ?? [];
  let next = 0;
  for (const { work, plan } of planned) {
    work.settle(ids.slice(next, next + plan.decisions.length), row.positions?.[work.namespace] ?? []);
    next += plan.decisions.length;
  }
  const lasts = Object.values(row.positions ?? {}).flatMap((positions) => positions.slice(-1).map(BigInt));
  return lasts.length === 0 ? undefined : lasts.reduce((a, b) => (a > b ? a : b)).toString();
}
