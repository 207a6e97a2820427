import { Quantity, QUANTITY_EXAMPLES } from '@quota/domain';
import type { QueuedAnswer, ReservationView, ReserveAnswer } from '../api-types.js';
import { integer, reservationId, seconds, wholeNumber } from '../args.js';
import { namespacePath, print, readInput, type Command, type Context } from '../context.js';
import { EXIT, UsageError, isAdmissionDenial, type ExitCode } from '../errors.js';
import { resourceList } from '../format/table.js';
import { identity, parseObjects, type KubeObject } from '../manifests.js';
import { followQueued, WAIT_HELP } from './queue.js';

/** The server's own bound on a reservation's TTL field (its configured maximum may be lower). */
const TTL_MAX_SECONDS = 365 * 24 * 3600;
/** The longest --wait quotactl sends; the server's own maximum (QUEUE_WAIT_MAX_SECONDS, 1 h by default) is usually lower and answers 422 above it. */
const WAIT_MAX_SECONDS = 7 * 24 * 3600;
const PRIORITY_MIN = -1000;
const PRIORITY_MAX = 1000;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;
const RESOURCE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * `requests.cpu=500m,pods=1`, every quantity checked with the domain's parser (Kubernetes'
 * own grammar), so a typo is a usage error and not a 422 after a round trip.
 */
export function parseResourceList(raw: string): Record<string, string> {
  const list: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    const name = eq < 0 ? '' : pair.slice(0, eq).trim();
    const value = eq < 0 ? '' : pair.slice(eq + 1).trim();
    if (!name || !value)
      throw new UsageError(
        `--resources takes name=quantity pairs separated by commas (requests.cpu=500m,pods=1), got ${JSON.stringify(pair)}`,
      );
    if (name in list) throw new UsageError(`--resources names ${name} twice`);
    if (!Quantity.tryParse(value)) throw new UsageError(`--resources: ${name}=${value}: ${QUANTITY_EXAMPLES}`);
    list[name] = value;
  }
  if (Object.keys(list).length === 0) throw new UsageError('--resources needs at least one name=quantity');
  return list;
}

/** The one object of a `reserve -f` file. */
async function readObject(ctx: Context, file: string): Promise<KubeObject> {
  const objects = parseObjects(await readInput(ctx.io, file), file === '-' ? 'standard input' : file);
  if (objects.length !== 1) throw new UsageError(`reserve -f takes exactly one object, ${file} holds ${objects.length}`);
  return objects[0]!.object;
}

/** `--wait`, `--priority`, `--no-follow`: the body's `wait`, refused here where the server would refuse it (only resource lists wait; a dry run does not). */
function waitOf(ctx: Context): { seconds: number; priority?: number } | undefined {
  const { flags } = ctx;
  const wait = seconds(flags.wait, 'wait', WAIT_MAX_SECONDS);
  const priority = integer(flags.priority, 'priority', PRIORITY_MIN, PRIORITY_MAX);
  if (wait === undefined) {
    if (priority !== undefined || flags['no-follow'])
      throw new UsageError(`${priority !== undefined ? '--priority' : '--no-follow'} goes with --wait`);
    return undefined;
  }
  if (flags.filename !== undefined)
    throw new UsageError('--wait takes --resources: only a resource list waits in the queue (an object is refused)');
  if (flags['dry-run']) throw new UsageError('--wait and --dry-run exclude each other: a dry run does not wait');
  return { seconds: wait, ...(priority !== undefined ? { priority } : {}) };
}

async function reserve(ctx: Context): Promise<ExitCode> {
  const { flags } = ctx;
  if (ctx.args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args[0])}: reserve takes only flags`);
  const files = flags.filename ?? [];
  if (files.length > 1) throw new UsageError('reserve takes one -f');
  const file = files[0];
  if ((file === undefined) === (flags.resources === undefined))
    throw new UsageError('reserve needs exactly one of --resources name=quantity,… or -f OBJECT');
  const wait = waitOf(ctx);
  const object = file !== undefined ? await readObject(ctx, file) : undefined;

  const kind = flags.kind ?? (typeof object?.kind === 'string' ? object.kind : undefined);
  if (!kind) throw new UsageError('reserve needs --kind (Pod, PersistentVolumeClaim, …)');
  if (!KIND.test(kind)) throw new UsageError(`--kind must be a Kubernetes kind such as Pod, got ${JSON.stringify(kind)}`);
  if (flags.resource !== undefined && !RESOURCE.test(flags.resource))
    throw new UsageError(
      `--resource must be a plural resource, optionally with its group (widgets.example.com), got ${JSON.stringify(flags.resource)}`,
    );
  const resources = flags.resources !== undefined ? parseResourceList(flags.resources) : undefined;
  const ttlSeconds = wholeNumber(flags.ttl, 'ttl', 1, TTL_MAX_SECONDS);

  let namespace = ctx.namespace;
  if (object) {
    const own = identity(object).namespace;
    if (own !== undefined && ctx.namespaceGiven && own !== ctx.namespace) {
      throw new UsageError(
        `the namespace from the provided object "${own}" does not match the namespace "${ctx.namespace}". You must pass '--namespace=${own}' to perform this operation.`,
      );
    }
    namespace = own ?? ctx.namespace;
  }
  const name = flags.name ?? (object ? identity(object).name : undefined);

  const body = {
    kind,
    ...(flags.resource !== undefined ? { resource: flags.resource } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(flags['request-id'] !== undefined ? { requestId: flags['request-id'] } : {}),
    ...(object ? { object } : { resources }),
    ...(flags['dry-run'] ? { dryRun: true } : {}),
    ...(ttlSeconds !== undefined ? { ttlSeconds } : {}),
    ...(wait ? { wait } : {}),
  };
  let answer: ReserveAnswer | undefined;
  try {
    const { status, body: answered } = await ctx.client.call<ReserveAnswer | QueuedAnswer>(
      'POST',
      namespacePath(namespace, 'reservations'),
      body,
    );
    if (status === 202 && answered?.id) return await followQueued(ctx, namespace, answered as QueuedAnswer);
    answer = answered as ReserveAnswer;
  } catch (error) {
    // A script asking for JSON gets the denial's details (quota, resource, requested, used, hard) on stdout too.
    if (isAdmissionDenial(error) && (ctx.output === 'json' || ctx.output === 'yaml')) print(ctx, error.body, () => '');
    throw error;
  }
  const table = (): string => {
    if (answer?.id) return `${answer.id}\n`;
    const charged = resourceList(answer?.charged);
    if (answer?.dryRun) return `dry run: allowed${answer.state === 'none' ? ', charges nothing' : `, would charge ${charged}`}\n`;
    // Allowed but nothing to charge (a kind no quota counts): there is no reservation to settle.
    ctx.io.stderr('allowed: nothing is charged, so no reservation was made\n');
    return '';
  };
  // -o name: `reservation/ID`, which commit and release take back; a dry run has no id, so its line goes to stderr.
  print(ctx, answer, table, () => (answer?.id ? [`reservation/${answer.id}`] : (ctx.io.stderr(table()), [])));
  return EXIT.ok;
}

function settle(action: 'commit' | 'release') {
  return async (ctx: Context): Promise<ExitCode> => {
    const id = reservationId(ctx.args, action);
    const path = namespacePath(ctx.namespace, 'reservations', id);
    const { body } =
      action === 'commit'
        ? await ctx.client.call<ReservationView>('POST', `${path}/commit`)
        : await ctx.client.call<ReservationView>('DELETE', path);
    print(
      ctx,
      body,
      () =>
        `reservation/${id} ${body?.state ?? (action === 'commit' ? 'committed' : 'released')}${body?.releaseReason ? ` (${body.releaseReason})` : ''}\n`,
      () => [`reservation/${id}`],
    );
    return EXIT.ok;
  };
}

export const reserveCommand: Command = {
  name: 'reserve',
  summary: 'reserve quota for an object (REST admission)',
  synopsis:
    'reserve [-n NS] --kind KIND [--name NAME] (--resources name=qty,… | -f OBJECT) [--request-id ID] [--dry-run] [--ttl SECONDS] [--wait DURATION [--priority N] [--no-follow]]',
  description: [
    'Asks the admission chain (LimitRanger defaults and limits, then every quota) to admit an object',
    "and charges it to the namespace's quotas at once; prints the reservation id. -f gives the",
    'object itself (a Pod is defaulted as the API server would: limits become requests); --resources',
    "a plain list under any resource name. A refusal prints the API server's message and exits 3.",
    'Commit the reservation once the object exists, or release it. -o name prints reservation/ID,',
    'which commit and release accept as they accept the bare id. A --resources name that no quota',
    'covering the namespace limits is charged nothing: the server warns of it, and the warning is',
    'printed on stderr as kubectl prints one (Warning: requests.cpus: … (did you mean requests.cpu?)).',
    '',
    WAIT_HELP,
  ].join('\n'),
  flags: [
    'namespace',
    'kind',
    'name',
    'resource',
    'resources',
    'filename',
    'request-id',
    'dry-run',
    'ttl',
    'wait',
    'priority',
    'no-follow',
  ],
  examples: [
    'quotactl reserve -n team-a --kind Pod --name web-1 --resources requests.cpu=500m,pods=1',
    'quotactl reserve -n team-a --kind Pod -f pod.yaml --request-id deploy-42-web-1',
    'ID=$(quotactl reserve -n team-a --kind Widget --resource widgets.example.com --name w1 --resources example.com/gpu=1 --ttl 600)',
    'quotactl reserve -n team-a --kind Job --resource jobs.batch --name train-7 --resources requests.cpu=4 --wait 10m --priority=100',
  ],
  needsServer: true,
  outputs: ['table', 'json', 'yaml', 'name'],
  run: reserve,
};

export const commitCommand: Command = {
  name: 'commit',
  summary: 'the reserved object exists: make its reservation permanent',
  synopsis: 'commit [-n NS] ID|reservation/ID',
  description: "Idempotent. Exits 1 with 410 Expired when the reservation's TTL ran out, 409 Conflict when it was released.",
  flags: ['namespace'],
  examples: ['quotactl commit -n team-a 3f6c1e2a-…'],
  needsServer: true,
  outputs: ['table', 'json', 'yaml', 'name'],
  run: settle('commit'),
};

export const releaseCommand: Command = {
  name: 'release',
  summary: 'give a reservation up (the object was deleted or never made)',
  synopsis: 'release [-n NS] ID|reservation/ID',
  description: 'Idempotent: releasing a released reservation answers as the first release did.',
  flags: ['namespace'],
  examples: ['quotactl release -n team-a 3f6c1e2a-…'],
  needsServer: true,
  outputs: ['table', 'json', 'yaml', 'name'],
  run: settle('release'),
};
