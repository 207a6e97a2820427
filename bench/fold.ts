/**
 * How fast the domain fold turns a namespace's history into usage: the cost every as-of
 * query and projection rebuild pays per event. Prints events/s; asserts nothing.
 *
 *   npm run bench:fold [-- EVENTS]
 */
import { fold, type LedgerEvent, type RecordedEvent } from '@quota/domain';

const total = Number(process.argv[2] ?? 1_000_000);
const podFacts = {
  Terminating: false,
  NotTerminating: true,
  BestEffort: false,
  NotBestEffort: true,
  PriorityClass: [],
  CrossNamespacePodAffinity: false,
};

function* history(): Generator<RecordedEvent> {
  let version = 0;
  const at = Date.UTC(2026, 0, 1);
  const emit = (event: LedgerEvent): RecordedEvent => ({ ...event, version: ++version, at: at + version });
  yield emit({
    type: 'QuotaDefined',
    data: { name: 'compute', spec: { hard: { 'requests.cpu': '1000', 'requests.memory': '1Ti', pods: '100k' } } },
  });
  yield emit({ type: 'QuotaDefined', data: { name: 'long-running', spec: { hard: { pods: '100k' }, scopes: ['NotTerminating'] } } });
  const live: string[] = [];
  let oldest = 0;
  let next = 0;
  while (version < total) {
    const id = `r${next++}`;
    yield emit({
      type: 'Reserved',
      data: {
        reservationId: id,
        object: { group: '', resource: 'pods', name: id, uid: `uid-${id}` },
        operation: 'CREATE',
        charged: { 'requests.cpu': '250m', 'requests.memory': '256Mi', pods: '1', 'count/pods': '1' },
        scopeFacts: podFacts,
      },
    });
    yield emit({ type: 'Committed', data: { reservationId: id } });
    live.push(id);
    if (live.length - oldest > 1000) {
      yield emit({ type: 'Released', data: { reservationId: live[oldest++] as string, reason: 'deleted' } });
    }
  }
}

const events = [...history()].slice(0, total);
const started = process.hrtime.bigint();
const state = fold(events);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const used = Object.fromEntries(Object.entries(state.used.get('compute') ?? {}).map(([k, q]) => [k, q.toString()]));
console.log(
  JSON.stringify({
    benchmark: 'domain fold',
    events: events.length,
    seconds: Number(seconds.toFixed(3)),
    eventsPerSecond: Math.round(events.length / seconds),
    liveReservations: state.reservations.size,
    used,
  }),
);
