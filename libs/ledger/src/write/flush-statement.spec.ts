import { describe, expect, it } from 'vitest';
import { EMPTY_HEAD, type ReservationJson } from '../head.js';
import { flushStatement, type FlushPlan } from './flush-statement.js';
import { recordFromJson } from '../rows.js';
import type { SharedHeadPlan } from '../shared-heads.js';

const reservation = (id: string): ReservationJson => ({
  id,
  object: { group: '', resource: 'pods', uid: `uid-${id}` },
  operation: 'CREATE',
  status: 'reserved',
  contribution: { pods: '1' },
  scopeFacts: {},
  version: 2,
  reservedAt: 1_000,
});

const plan = (over: Partial<FlushPlan>): FlushPlan => ({
  namespace: 'team-a',
  base: { version: 1, existed: true },
  head: { version: 2, state: EMPTY_HEAD },
  events: [],
  created: [],
  changed: [],
  decisions: [],
  ...over,
});

const reserved = {
  version: 2,
  type: 'Reserved',
  data: { reservationId: 'r1' },
  request_id: 'review:1',
  actor: 'alice',
  on_behalf_of: null,
  at: 1_000,
};
const decision = {
  source: 'webhook',
  operation: 'CREATE',
  resource: 'pods',
  requester: 'alice',
  dryRun: false,
  result: { allowed: true, code: 200, dryRun: false },
} as const;
const denial = { ...decision, result: { allowed: false, code: 403, dryRun: false, stage: 'ResourceQuota' } } as const;
const json = (value: unknown): unknown[] => JSON.parse(String(value)) as unknown[];

describe('flushStatement', () => {
  it('writes nothing for a group that decided nothing new', () => {
    expect(flushStatement([plan({}), plan({ namespace: 'team-b' })], 1_000)).toBeUndefined();
  });

  it('advances each existing head only from the version the group read (the compare-and-set), and ties every write to a head that moved', () => {
    const statement = flushStatement(
      [
        plan({
          events: [reserved],
          created: [recordFromJson(reservation('r1'), 'reserved', { eventVersions: [2] })],
          decisions: [decision],
        }),
        plan({
          namespace: 'team-b',
          base: { version: 7, existed: true },
          head: { version: 8, state: EMPTY_HEAD },
          events: [{ ...reserved, version: 8 }],
        }),
      ],
      1_000,
    );
    expect(statement?.text).toContain('UPDATE namespace_heads AS t SET version = h.version');
    expect(statement?.text).toContain('WHERE h.existed AND t.namespace = h.namespace AND t.version = h.base');
    expect(json(statement?.values?.[0])).toEqual([
      expect.objectContaining({ namespace: 'team-a', base: 1, existed: true, version: 2 }),
      expect.objectContaining({ namespace: 'team-b', base: 7, existed: true, version: 8 }),
    ]);
    expect(json(statement?.values?.[1])).toEqual([
      expect.objectContaining({ namespace: 'team-a', version: 2 }),
      expect.objectContaining({ namespace: 'team-b', version: 8 }),
    ]);
    // The events, the new reservation and the decision are each written only if their namespace's head moved.
    expect(statement?.text.match(/\.namespace IN \(SELECT namespace FROM head\)/g)).toHaveLength(3);
    expect(statement?.text).toContain('(SELECT count(*) FROM head)::int AS head_rows');
    expect(statement?.text).toContain('(SELECT array_agg(id::text ORDER BY id) FROM decided) AS ids');
  });

  it("returns one row whatever the group holds, with the positions each stream's events got, in version order (what a write answers to read after)", () => {
    const statement = flushStatement(
      [
        plan({ events: [reserved, { ...reserved, version: 3 }], decisions: [decision, decision] }),
        plan({ namespace: 'team-b', events: [reserved] }),
      ],
      1_000,
    );
    expect(statement?.text).toContain('ORDER BY e.namespace, e.version\n        RETURNING namespace, version, position)');
    expect(statement?.text).toContain(
      '(SELECT jsonb_object_agg(p.namespace, p.positions) FROM (SELECT namespace, jsonb_agg(position::text ORDER BY version) AS positions FROM events GROUP BY namespace) AS p) AS positions',
    );
    // No FROM after the aggregates: one row, not one per decision each repeating the positions.
    expect(statement?.text).toMatch(
      /\) SELECT \(SELECT array_agg\(id::text ORDER BY id\) FROM decided\) AS ids, \(SELECT count\(\*\) FROM head\)::int AS head_rows, \(SELECT jsonb_object_agg[^]*AS positions$/,
    );
  });

  it('returns no positions, in the same row shape, for a group that only logs decisions', () => {
    const statement = flushStatement([plan({ decisions: [denial] })], 1_000);
    expect(statement?.text).not.toContain('RETURNING namespace, version, position');
    expect(statement?.text).toMatch(
      / SELECT \(SELECT array_agg\(id::text ORDER BY id\) FROM decided\) AS ids, 0 AS head_rows, NULL::jsonb AS positions$/,
    );
  });

  it('inserts the first head of a namespace instead (its primary key is the guard against a concurrent first write)', () => {
    const statement = flushStatement(
      [plan({ base: { version: 0, existed: false }, head: { version: 1, state: EMPTY_HEAD }, events: [{ ...reserved, version: 1 }] })],
      1_000,
    );
    expect(statement?.text).toContain('INSERT INTO namespace_heads (namespace, version, state)');
    expect(statement?.text).toContain('WHERE NOT h.existed');
    expect(json(statement?.values?.[0])).toEqual([expect.objectContaining({ existed: false, version: 1 })]);
  });

  it('logs denials alone without touching a head', () => {
    const statement = flushStatement([plan({ decisions: [denial] }), plan({ namespace: 'team-b', decisions: [denial] })], 1_000);
    expect(statement?.text).not.toContain('namespace_heads');
    expect(statement?.text).not.toContain('FROM head');
    expect(statement?.text).toContain('0 AS head_rows');
    expect(json(statement?.values?.[1])).toEqual([
      expect.objectContaining({ ord: 0, namespace: 'team-a', appends: false, allowed: false, code: 403, reason: 'ResourceQuota' }),
      expect.objectContaining({ ord: 1, namespace: 'team-b' }),
    ]);
  });

  it('writes a denial even when another namespace of the group fails its compare-and-set, and an admission only with its head', () => {
    const statement = flushStatement(
      [plan({ decisions: [denial] }), plan({ namespace: 'team-b', events: [reserved], decisions: [decision] })],
      1_000,
    );
    expect(statement?.text).toContain('WHERE NOT d.appends OR d.namespace IN (SELECT namespace FROM head)');
    const rows = json(statement?.values?.at(-1));
    expect(rows).toEqual([
      expect.objectContaining({ namespace: 'team-a', appends: false }),
      expect.objectContaining({ namespace: 'team-b', appends: true }),
    ]);
  });

  it('updates known reservation rows by key and inserts new ones, never an upsert', () => {
    const committed = recordFromJson({ ...reservation('r0'), status: 'committed', committedAt: 1_000 }, 'committed', {
      eventVersions: [1, 2],
    });
    const statement = flushStatement([plan({ events: [reserved], changed: [committed] })], 1_000);
    expect(statement?.text).toContain('changed_reservations AS (UPDATE reservations AS t SET');
    expect(statement?.text).toContain('WHERE t.namespace = r.namespace AND t.reservation_id = r.reservation_id');
    expect(statement?.text).not.toContain('created_reservations');
    expect(statement?.text).not.toContain('ON CONFLICT');
  });

  it('names each shape of the statement once, whatever the number of namespaces and rows, so it is prepared once per connection', () => {
    const a = flushStatement([plan({ decisions: [decision] })], 1_000);
    const b = flushStatement([plan({ decisions: [decision, decision] }), plan({ namespace: 'team-b', decisions: [decision] })], 2_000);
    const c = flushStatement([plan({ events: [reserved] })], 1_000);
    const d = flushStatement([plan({ events: [reserved] }), plan({ namespace: 'team-b', events: [reserved] })], 1_000);
    expect(a?.name).toBe(b?.name);
    expect(c?.name).toBe(d?.name);
    expect(a?.name).not.toBe(c?.name);
    expect(a?.name).toMatch(/^ledger_flush_[0-9a-z]+$/);
  });

  it('numbers every parameter of every shape in the order of its values: jsonb row sets as JSON arrays, the clock as a number', () => {
    const created = recordFromJson(reservation('r1'), 'reserved', { eventVersions: [2] });
    const changed = recordFromJson({ ...reservation('r0'), status: 'committed', committedAt: 1_000 }, 'committed', {
      eventVersions: [1, 2],
    });
    const sharedHead = {
      key: 'crq:a',
      base: { revision: 1, existed: true },
      revision: 2,
      version: 3,
      state: {},
      events: [],
    } as unknown as SharedHeadPlan;
    for (let bits = 1; bits < 32; bits++) {
      const has = (bit: number): boolean => (bits & bit) !== 0;
      const appends = has(2) || has(4) || has(8);
      const statement = flushStatement(
        [
          plan({
            events: appends ? [reserved] : [],
            created: has(4) ? [created] : [],
            changed: has(8) ? [changed] : [],
            decisions: has(16) ? [decision] : [],
          }),
        ],
        1_000,
        has(1) ? [sharedHead] : [],
      );
      if (!statement) continue;
      const numbers = [...statement.text.matchAll(/\$(\d+)(::jsonb| \/ 1000\.0)/g)].map((m) => ({
        at: Number(m[1]) - 1,
        jsonb: m[2] === '::jsonb',
      }));
      expect(
        numbers.map((n) => n.at).sort((x, y) => x - y),
        `shape ${bits}`,
      ).toEqual(statement.values?.map((_, i) => i));
      for (const { at, jsonb } of numbers) if (!jsonb) expect(typeof statement.values?.[at], `shape ${bits} $${at + 1}`).toBe('number');
      // Each row set is read back under an alias whose columns its rows carry.
      const columnOf: Record<string, string> = { h: 'base', e: 'type', s: 'revision', r: 'reservation_id', d: 'ord' };
      for (const [, at, alias] of statement.text.matchAll(/\$(\d+)::jsonb\)\s+AS (\w)\(/g)) {
        const rows = json(statement.values?.[Number(at) - 1]) as Record<string, unknown>[];
        // A group of shared quotas alone writes no namespace head nor event (h and e are empty then).
        if (rows.length > 0) expect(rows[0], `shape ${bits} $${at} AS ${alias}`).toHaveProperty(columnOf[alias ?? ''] ?? '?');
      }
    }
  });
});
