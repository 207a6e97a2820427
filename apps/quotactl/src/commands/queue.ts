import type { NamespaceQueue, QueuedAnswer, QueuedReservation, ReservationView } from '../api-types.js';
import { namespacePath, print, type Command, type Context } from '../context.js';
import { reservationId } from '../args.js';
import { EXIT, UsageError, type ExitCode } from '../errors.js';
import { age } from '../format/table.js';
import { queuedMessage, queueTable } from '../format/queue.js';

/** The server holds a watch at most this long (WATCH_TIMEOUT_MAX_SECONDS). */
const WATCH_SECONDS_MAX = 300;
/** A watch that comes back still queued sooner than this is not asked again before it passes (an older server that ignores `watch`). */
const WATCH_INTERVAL_MIN_MS = 1000;

/** What a watch of a reservation answers: it still waits (or stopped waiting), or it was admitted. */
type Watched = Partial<QueuedReservation> | (Partial<ReservationView> & { readonly state?: string });

/**
 * How long each watch asks the server to hold the answer: below quotactl's own bound on an
 * exchange (--request-timeout), with a margin for the answer to arrive, and at most the server's.
 */
export function watchSeconds(timeoutMs: number): number {
  if (timeoutMs === 0) return WATCH_SECONDS_MAX;
  return Math.max(1, Math.min(WATCH_SECONDS_MAX, Math.floor(timeoutMs / 1000) - 3));
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * After a 202: says on stderr that it is queued, where and for what, then (unless --no-follow)
 * watches it with `?watch=true` until it is admitted, expires or is cancelled, saying on stderr
 * when its position changes. Admitted, it prints what reserve prints for a reservation (the id,
 * or the reservation in -o json/yaml) and exits 0; expired exits 3 (an admission that never
 * came), cancelled 1. With --no-follow it prints the id and exits 0 while it waits.
 */
export async function followQueued(ctx: Context, namespace: string, queued: QueuedAnswer): Promise<ExitCode> {
  const id = queued.id;
  ctx.io.stderr(queuedMessage(queued, ctx.now()));
  if (ctx.flags['no-follow']) {
    print(
      ctx,
      queued,
      () => `${id}\n`,
      () => [`reservation/${id}`],
    );
    return EXIT.ok;
  }
  const started = ctx.now();
  let position = queued.position;
  for (;;) {
    const asked = Date.now();
    const query = { watch: 'true', timeoutSeconds: String(watchSeconds(ctx.client.timeoutMs)) };
    const { body } = await ctx.client.call<Watched>('GET', namespacePath(namespace, 'reservations', id), undefined, query);
    if (body?.state !== 'queued') return outcome(ctx, id, body ?? {}, started);
    const now = (body as Partial<QueuedReservation>).position;
    if (now !== undefined && now !== position) ctx.io.stderr(`reservation/${id} now at position ${now}\n`);
    position = now ?? position;
    const spent = Date.now() - asked;
    if (spent < WATCH_INTERVAL_MIN_MS) await pause(WATCH_INTERVAL_MIN_MS - spent);
  }
}

/** How a watch ended; `started` is when quotactl began watching, undefined when it was no longer queued when asked. */
function outcome(ctx: Context, id: string, body: Watched, started: number | undefined): ExitCode {
  const state = body.state ?? 'unknown';
  if (state === 'expired' || state === 'cancelled') {
    print(
      ctx,
      body,
      () => '',
      () => [],
    );
    const reason = 'reason' in body && body.reason ? `: ${body.reason}` : '';
    ctx.io.stderr(
      `error: reservation/${id} ${state === 'expired' ? 'expired while it waited' : 'was cancelled while it waited'}${reason}\n`,
    );
    return state === 'expired' ? EXIT.denied : EXIT.failed;
  }
  const now = state === 'reserved' ? '' : ` (now ${state})`;
  const when =
    started === undefined ? 'was admitted before this wait' : `admitted after ${age(new Date(started).toISOString(), ctx.now())}`;
  ctx.io.stderr(`reservation/${id} ${when}${now}\n`);
  print(
    ctx,
    body,
    () => `${id}\n`,
    () => [`reservation/${id}`],
  );
  return EXIT.ok;
}

async function queue(ctx: Context): Promise<ExitCode> {
  if (ctx.args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args[0])}: queue takes only flags`);
  const { body } = await ctx.client.call<Partial<NamespaceQueue>>('GET', namespacePath(ctx.namespace, 'queue'));
  const items = body?.items ?? [];
  print(
    ctx,
    body,
    () => {
      if (items.length > 0) return queueTable(items, ctx.now());
      ctx.io.stderr(`No reservations waiting in ${ctx.namespace} namespace.\n`);
      return '';
    },
    () => items.map((item) => `reservation/${item.id}`),
  );
  return EXIT.ok;
}

/** `quotactl wait ID`: watches a reservation that is already queued as `reserve --wait` does (after --no-follow, or a Ctrl-C). */
async function wait(ctx: Context): Promise<ExitCode> {
  const id = reservationId(ctx.args, 'wait');
  const { body } = await ctx.client.call<Watched>('GET', namespacePath(ctx.namespace, 'reservations', id));
  if (body?.state === 'queued') {
    const waiting = body as Partial<QueuedReservation>;
    return followQueued(ctx, ctx.namespace, {
      id,
      namespace: ctx.namespace,
      state: 'queued',
      position: waiting.position ?? 0,
      waitingFor: waiting.waitingFor ?? [],
      expiresAt: waiting.expiresAt ?? '',
    });
  }
  return outcome(ctx, id, body ?? {}, undefined);
}

export const waitCommand: Command = {
  name: 'wait',
  summary: 'watch a queued reservation until it is admitted, expires or is cancelled',
  synopsis: 'wait [-n NS] ID|reservation/ID [-o table|json|yaml|name]',
  description: [
    'Takes up a reservation that `reserve --wait` queued (after --no-follow, or a Ctrl-C) and does',
    'what reserve --wait does from there: says on stderr where it stands and when its position',
    'changes, then prints the id once it is admitted (exit 0), or exits 3 when it expired and 1 when',
    'it was cancelled. A reservation that was admitted before the wait began prints its id at once',
    '(exit 0). Ctrl-C stops watching and leaves it queued.',
  ].join('\n'),
  flags: ['namespace'],
  examples: [
    'quotactl reserve -n team-a --kind Job --resources cpu=4 --wait 30m --no-follow',
    'quotactl wait -n team-a 01JD…',
    'quotactl queue -n team-a -o name | xargs -r -n1 quotactl wait -n team-a',
  ],
  needsServer: true,
  outputs: ['table', 'json', 'yaml', 'name'],
  run: wait,
};

export const queueCommand: Command = {
  name: 'queue',
  summary: "the namespace's reservations waiting for room, in the order they will be admitted",
  synopsis: 'queue [-n NS] [-o table|json|yaml|name]',
  description: [
    'POSITION, ID, PRIORITY, RESOURCES (what it asks), AGE (how long it has waited), EXPIRES (how',
    "long it may still wait), TYPICAL WAIT (the median and p90 of how long the namespace's recent",
    'waiters asking for about as much waited; <none> below 5 of them) and WAITING FOR (each quota and resource that is short, as',
    '`quota: resource requested (used used/hard)`, or the blocking reservation ahead of it) for',
    'every reservation `reserve --wait` queued in the namespace, in queue order: priority, then',
    'arrival. -o name prints reservation/ID lines, which release takes to cancel them.',
  ].join('\n'),
  flags: ['namespace'],
  examples: [
    'quotactl queue -n team-a',
    'quotactl queue -n team-a -o json',
    'quotactl queue -n team-a -o name | xargs -r -n1 quotactl release -n team-a',
  ],
  needsServer: true,
  outputs: ['table', 'json', 'yaml', 'name'],
  run: queue,
};

/** For the help of `reserve`: how --wait behaves, in the words its flags use. */
export const WAIT_HELP = [
  'With --wait, a reservation that does not fit waits in the queue (answered 202) instead of being',
  'refused: quotactl says on stderr that it is queued, at which position and for what, then watches',
  'it until it is admitted (the id on stdout, exit 0), expires (exit 3) or is cancelled (exit 1);',
  'Ctrl-C stops watching and leaves it queued (`quotactl wait ID` watches it again, `quotactl release',
  'ID` cancels it). --no-follow returns at once with the id of the queued reservation. `quotactl',
  'queue` lists the queue.',
].join('\n');
