import { describe, expect, it } from 'vitest';
import { EMPTY_HEAD, type ReservationJson } from './head.js';
import { flushStatement, type FlushPlan } from './flush-statement.js';
import { recordFromJson } from './rows.js';

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
  now: 1_000,
  ...over,
});

const reserved = { version: 2, type: 'Reserved', data: { reservationId: 'r1' }, request_id: 'review:1', actor: 'alice', on_behalf_of: null, at: 1_000 };
const decision = { source: 'webhook', operation: 'CREATE', resource: 'pods', requester: 'alice', dryRun: false, result: { allowed: true, code: 200, dryRun: false } } as const;

describe('flushStatement', () => {
  it('writes nothing for a batch that decided nothing new', () => {
    expect(flushStatement(plan({}))).toBeUndefined();
  });

  it('advances an existing head only from the version the batch read (the compare-and-set), and ties every write to it', () => {
    const statement = flushStatement(plan({ events: [reserved], created: [recordFromJson(reservation('r1'), 'reserved', { eventVersions: [2] })], decisions: [decision] }));
    expect(statement?.text).toContain('UPDATE namespace_heads SET version = $2');
    expect(statement?.text).toMatch(/WHERE namespace = \$1 AND version = \$4 RETURNING 1/);
    expect(statement?.values?.[0]).toBe('team-a');
    expect(statement?.values?.[1]).toBe(2);
    expect(statement?.values?.[3]).toBe(1);
    // The events, the new reservation and the decision are each written only if the head moved.
    expect(statement?.text.match(/WHERE EXISTS \(SELECT 1 FROM head\)/g)).toHaveLength(3);
    expect(statement?.text).toContain('(SELECT count(*) FROM head)::int AS head_rows');
    expect(statement?.text).toContain('SELECT id::text AS id FROM decided');
  });

  it('inserts the first head of a namespace instead (its primary key is the guard against a concurrent first write)', () => {
    const statement = flushStatement(plan({ base: { version: 0, existed: false }, head: { version: 1, state: EMPTY_HEAD }, events: [{ ...reserved, version: 1 }] }));
    expect(statement?.text).toContain('INSERT INTO namespace_heads (namespace, version, state) VALUES ($1, $2, $3::jsonb)');
    expect(statement?.text).not.toContain('UPDATE namespace_heads');
  });

  it('logs a denial alone without touching the head', () => {
    const statement = flushStatement(plan({ decisions: [{ ...decision, result: { allowed: false, code: 403, dryRun: false, stage: 'ResourceQuota' } }] }));
    expect(statement?.text).not.toContain('namespace_heads');
    expect(statement?.text).not.toContain('EXISTS (SELECT 1 FROM head)');
    expect(statement?.text).toContain('1 AS head_rows');
    expect(JSON.parse(String(statement?.values?.[2]))).toEqual([expect.objectContaining({ ord: 0, allowed: false, code: 403, reason: 'ResourceQuota' })]);
  });

  it('updates known reservation rows by key and inserts new ones, never an upsert', () => {
    const committed = recordFromJson({ ...reservation('r0'), status: 'committed', committedAt: 1_000 }, 'committed', { eventVersions: [1, 2] });
    const statement = flushStatement(plan({ events: [reserved], changed: [committed] }));
    expect(statement?.text).toContain('changed_reservations AS (UPDATE reservations AS t SET');
    expect(statement?.text).not.toContain('created_reservations');
    expect(statement?.text).not.toContain('ON CONFLICT');
  });

  it('names each shape of the statement once, so it is prepared once per connection', () => {
    const a = flushStatement(plan({ decisions: [decision] }));
    const b = flushStatement(plan({ decisions: [decision, decision], now: 2_000 }));
    const c = flushStatement(plan({ events: [reserved] }));
    expect(a?.name).toBe(b?.name);
    expect(a?.name).not.toBe(c?.name);
    expect(a?.name).toMatch(/^ledger_flush_[0-9a-z]+$/);
  });
});
