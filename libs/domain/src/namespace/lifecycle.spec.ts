import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { evolve, fold, type NamespaceState } from '../events/fold.js';
import * as Resources from '../resources/resource-list.js';
import { decideCommit, decideRelease } from './lifecycle.js';

const T0 = Date.UTC(2026, 0, 1);
const facts = { NotTerminating: true, Terminating: false };
const obj = { group: '', resource: 'pods', uid: 'u1' };

function history(events: LedgerEvent[]): NamespaceState {
  return fold(events.map((event, i) => ({ ...event, version: i + 1, at: T0 + i })));
}
const appendAll = (state: NamespaceState, events: readonly LedgerEvent[]): NamespaceState =>
  events.reduce((s, event) => evolve(s, { ...event, version: s.version + 1, at: T0 + s.version + 1 }), state);

const base: LedgerEvent[] = [
  { type: 'QuotaDefined', data: { name: 'q', spec: { hard: { 'requests.cpu': '10' } } } },
  {
    type: 'Reserved',
    data: { reservationId: 'v1', object: obj, operation: 'CREATE', charged: { 'requests.cpu': '1' }, scopeFacts: facts },
  },
  { type: 'Committed', data: { reservationId: 'v1' } },
  {
    type: 'Reserved',
    data: {
      reservationId: 'v2',
      object: obj,
      operation: 'UPDATE',
      charged: { 'requests.cpu': '1' },
      objectUsage: { 'requests.cpu': '2' },
      supersedes: 'v1',
      scopeFacts: facts,
      previousScopeFacts: facts,
    },
  },
  {
    type: 'Reserved',
    data: {
      reservationId: 'v3',
      object: obj,
      operation: 'UPDATE',
      charged: { 'requests.cpu': '1' },
      objectUsage: { 'requests.cpu': '3' },
      supersedes: 'v2',
      scopeFacts: facts,
      previousScopeFacts: facts,
    },
  },
];

describe('decideCommit', () => {
  it('commits the later of two pending updates and retires the earlier one and the committed state before it', () => {
    const state = history(base);
    expect(Resources.canonicalResourceList(state.used.get('q') ?? {})).toEqual({ 'requests.cpu': '3' });
    const outcome = decideCommit(state, 'v3', T0);
    expect(outcome).toEqual({
      kind: 'Commit',
      events: [
        { type: 'Committed', data: { reservationId: 'v3' } },
        { type: 'Released', data: { reservationId: 'v1', reason: 'superseded' } },
        { type: 'Released', data: { reservationId: 'v2', reason: 'superseded' } },
      ],
    });
    if (outcome.kind !== 'Commit') return;
    const after = appendAll(state, outcome.events);
    expect(Resources.canonicalResourceList(after.used.get('q') ?? {})).toEqual({ 'requests.cpu': '3' });
    expect([...after.reservations.keys()]).toEqual(['v3']);
    expect(after.reservationsByUid.get('u1')).toBe('v3');
  });

  it('retires the committed state even when the change between them was released (the supersedes link is broken)', () => {
    const state = appendAll(history(base), [{ type: 'Released', data: { reservationId: 'v2', reason: 'stale' } }]);
    const outcome = decideCommit(state, 'v3', T0);
    expect(outcome).toEqual({
      kind: 'Commit',
      events: [
        { type: 'Committed', data: { reservationId: 'v3' } },
        { type: 'Released', data: { reservationId: 'v1', reason: 'superseded' } },
      ],
    });
    if (outcome.kind !== 'Commit') return;
    // Counted once, at its new usage: before, the broken chain left v1 counted beside v3.
    expect(Resources.canonicalResourceList(appendAll(state, outcome.events).used.get('q') ?? {})).toEqual({ 'requests.cpu': '3' });
  });

  it('leaves a later pending change alone when an earlier one is committed', () => {
    const outcome = decideCommit(history(base), 'v2', T0);
    expect(outcome).toEqual({
      kind: 'Commit',
      events: [
        { type: 'Committed', data: { reservationId: 'v2' } },
        { type: 'Released', data: { reservationId: 'v1', reason: 'superseded' } },
      ],
    });
  });

  it.each([
    // [case, the earlier change's cpu, expected]
    [
      'refuses to commit a change lowering the settled state under a later one waiting: it would be charged less than it asks',
      '500m',
      'Blocked',
    ],
    ['commits one that lowers nothing: the later change stays covered by its increase over the settled state', '2', 'Commit'],
  ] as const)('%s', (_case, cpu, expected) => {
    // Settled at 1 cpu; a change to `cpu` (charged its increase), then a later one back to 1 (charged nothing).
    const state = history([
      ...base.slice(0, 3),
      {
        type: 'Reserved',
        data: {
          reservationId: 'v2',
          object: obj,
          operation: 'UPDATE',
          charged: { 'requests.cpu': cpu === '2' ? '1' : '0' },
          objectUsage: { 'requests.cpu': cpu },
          supersedes: 'v1',
          scopeFacts: facts,
          previousScopeFacts: facts,
        },
      },
      {
        type: 'Reserved',
        data: {
          reservationId: 'v3',
          object: obj,
          operation: 'UPDATE',
          charged: { 'requests.cpu': '0' },
          objectUsage: { 'requests.cpu': '1' },
          supersedes: 'v2',
          scopeFacts: facts,
          previousScopeFacts: facts,
        },
      },
    ]);
    const outcome = decideCommit(state, 'v2', T0);
    expect(outcome.kind).toBe(expected);
    if (outcome.kind === 'Blocked') expect(outcome.by).toBe('v3');
    // The later change may always be committed: it supersedes the earlier one.
    expect(decideCommit(state, 'v3', T0).kind).toBe('Commit');
    // Once the later one is released, nothing blocks the earlier one.
    expect(decideCommit(state, 'v2', T0, new Set(['v3'])).kind).toBe('Commit');
  });

  it('is idempotent: a committed reservation needs nothing appended', () => {
    expect(decideCommit(history(base), 'v1', T0)).toEqual({ kind: 'AlreadyCommitted' });
  });

  it('a released or unknown reservation is not live', () => {
    const released = appendAll(history(base), [{ type: 'Released', data: { reservationId: 'v3', reason: 'cancelled' } }]);
    expect(decideCommit(released, 'v3', T0)).toEqual({ kind: 'NotLive' });
    expect(decideCommit(released, 'nope', T0)).toEqual({ kind: 'NotLive' });
  });

  it('a reservation past its expiry is released as expired instead of committed', () => {
    const state = history([
      ...base,
      {
        type: 'Reserved',
        data: {
          reservationId: 'rest',
          object: { group: '', resource: 'pods' },
          operation: 'CREATE',
          charged: { 'requests.cpu': '1' },
          scopeFacts: facts,
          expiresAt: new Date(T0 + 1000).toISOString(),
        },
      },
    ]);
    expect(decideCommit(state, 'rest', T0 + 999).kind).toBe('Commit');
    expect(decideCommit(state, 'rest', T0 + 1000)).toEqual({
      kind: 'Expired',
      events: [{ type: 'Released', data: { reservationId: 'rest', reason: 'expired' } }],
    });
  });
});

describe('decideRelease', () => {
  it('releases a live reservation once; a second release appends nothing', () => {
    const state = history(base);
    const first = decideRelease(state, 'v3', 'cancelled');
    expect(first).toEqual({ kind: 'Release', events: [{ type: 'Released', data: { reservationId: 'v3', reason: 'cancelled' } }] });
    if (first.kind !== 'Release') return;
    expect(decideRelease(appendAll(state, first.events), 'v3', 'cancelled')).toEqual({ kind: 'NotLive' });
  });

  it('releases the pending changes of an object with its settled state: none of them can happen any more', () => {
    const state = history(base);
    const outcome = decideRelease(state, 'v1', 'deleted');
    expect(outcome).toEqual({
      kind: 'Release',
      events: ['v1', 'v2', 'v3'].map((reservationId) => ({ type: 'Released', data: { reservationId, reason: 'deleted' } })),
    });
    if (outcome.kind !== 'Release') return;
    // Otherwise a REST client could give the settled state up and then commit a change counted
    // only as its increase: the whole new usage would land unchecked.
    expect(decideCommit(appendAll(state, outcome.events), 'v3', T0)).toEqual({ kind: 'NotLive' });
  });
});
