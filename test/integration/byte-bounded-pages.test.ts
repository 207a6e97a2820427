import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeReservationCursor, HISTORY_PAGE_MAX_BYTES, type Page } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { Ledger } from '../support/ledger.js';
import { rewriteWithHugeNames } from '../support/oversized.js';

/**
 * History pages are bounded in bytes, not only rows. Rows written before names were
 * bounded carry 2 MB names here; a page takes rows while the bytes before them are under
 * HISTORY_PAGE_MAX_BYTES (so always the first), and says where the next one starts. Small rows
 * still come 100 to a page.
 */
const HUGE = 2 * 1024 * 1024;
const RESERVED = 5;

let db: TestDatabase & { dataSource: DataSource };
let ledger: Ledger;

async function fill(namespace: string): Promise<void> {
  await ledger.putQuota(namespace, { name: 'objects', spec: { hard: { 'count/configmaps': '100' } } }, { actor: 'admin' });
  for (let i = 0; i < RESERVED; i++) {
    const name = `cm-${i}`;
    const outcome = await ledger.admit({
      namespace,
      source: 'rest',
      request: { operation: 'CREATE', groupResource: { group: '', resource: 'configmaps' }, namespace, name },
      resources: { 'count/configmaps': '1' },
      kind: 'ConfigMap',
      dryRun: false,
      requester: 'team-ci',
    });
    expect(outcome.result.allowed).toBe(true);
  }
}

beforeAll(async () => {
  db = await createMigratedDatabase('qlbytes');
  ledger = new Ledger(db.dataSource, { retryBaseMs: 1 });
  await fill('big');
  await fill('small');
  await fill('squeezed');
  await rewriteWithHugeNames(db.dataSource, 'big', HUGE);
  await rewriteWithHugeNames(db.dataSource, 'squeezed', HUGE, 'repeated');
}, 120_000);
afterAll(async () => {
  await ledger?.close();
  await db?.drop();
});

/** Every page from the first, each checked: at least one item, and no second item once the budget is spent. */
async function allPages<T>(read: (after: string | undefined) => Promise<Page<T>>): Promise<T[][]> {
  const pages: T[][] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await read(after);
    expect(page.items.length).toBeGreaterThan(0);
    const sizes = page.items.map((item) => JSON.stringify(item).length);
    // Only the last item may take the page past its budget.
    expect(sizes.slice(0, -1).reduce((a, b) => a + b, 0)).toBeLessThan(HISTORY_PAGE_MAX_BYTES);
    pages.push([...page.items]);
    if (!page.next) return pages;
    after = page.next;
  }
  throw new Error('more than 100 pages');
}

describe('history pages over rows with 2 MB names', () => {
  it('reads the events a huge row per page, each page with a next, and none skipped', async () => {
    const pages = await allPages((after) => ledger.readEvents('big', { ...(after ? { after } : {}), limit: 100 }));
    // The quota's event and the first reservation fit under the budget; then one per page.
    expect(pages.map((p) => p.length)).toEqual([2, 1, 1, 1, 1]);
    expect(pages.flat().map((e) => (e as { version: number }).version)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('reads the decisions log a huge row per page, oldest or newest first', async () => {
    const oldest = await allPages((after) => ledger.listDecisions('big', { ...(after ? { after } : {}), limit: 1000 }));
    expect(oldest.map((p) => p.length)).toEqual([1, 1, 1, 1, 1]);
    const newest = await allPages((after) => ledger.listDecisions('big', { ...(after ? { after } : {}), limit: 1000, newestFirst: true }));
    expect(newest.flat().map((d) => d.id)).toEqual(
      oldest
        .flat()
        .map((d) => d.id)
        .reverse(),
    );
    expect(newest.flat()[0]?.name).toHaveLength(HUGE);
  });

  it('lists reservations a huge row per page', async () => {
    const pages = await allPages((after) => {
      const cursor = after === undefined ? undefined : decodeReservationCursor(after);
      return ledger.audit.listReservations('big', { ...(cursor ? { after: cursor } : {}), limit: 1000 });
    });
    expect(pages.map((p) => p.length)).toEqual([1, 1, 1, 1, 1]);
  });

  it('counts a row by its size as read, not as stored: names PostgreSQL compresses a hundredfold come a page each too', async () => {
    const stored = await db.dataSource.query(
      `SELECT pg_column_size(data) AS bytes FROM ledger_events WHERE namespace = 'squeezed' AND type = 'Reserved' LIMIT 1`,
    );
    expect(Number(stored[0].bytes)).toBeLessThan(HUGE / 50);
    const pages = await allPages((after) => ledger.readEvents('squeezed', { ...(after ? { after } : {}), limit: 100 }));
    expect(pages.map((p) => p.length)).toEqual([2, 1, 1, 1, 1]);
  });

  it('still answers small rows a full page at a time, without a next after the last', async () => {
    const events = await ledger.readEvents('small', { limit: 100 });
    expect(events.items).toHaveLength(RESERVED + 1);
    expect(events.next).toBeUndefined();
    const decisions = await ledger.listDecisions('small', { limit: RESERVED });
    expect(decisions.items).toHaveLength(RESERVED);
    expect(decisions.next).toBeUndefined();
    const first = await ledger.listDecisions('small', { limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.next).toBe(first.items[1]?.id);
  });
});
