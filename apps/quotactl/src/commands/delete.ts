import type { ReservationView } from '../api-types.js';
import { RESERVATION_ID } from '../args.js';
import { ApiError, Unavailable } from '../client.js';
import { enc, namespacePath, type Command, type Context } from '../context.js';
import { EXIT, UsageError, errorMessage, exitCodeOf, type ExitCode } from '../errors.js';
import { targetsOf } from './apply.js';
import { NAME_PREFIX, NAMESPACE_TYPES, pathOf, resourceAndName } from './get.js';

/** What one deletion removes: the DELETE to send and how kubectl names the object in its lines. */
interface Deletion {
  readonly path: string;
  /** `resourcequota`, `clusterresourcequota.quota.openshift.io`, `namespace`, `reservation`. */
  readonly singular: string;
  readonly name: string;
  /** A reservation is released (the API's DELETE of it), not deleted: its record stays. */
  readonly reservation?: boolean;
}

const RESERVATION_TYPES: ReadonlySet<string> = new Set(['reservation', 'reservations']);

/** One `TYPE` and its names, as kubectl takes them: `quota a b` or `quota/a limitrange/b`. */
function deletionsOf(ctx: Context): Deletion[] {
  const args = ctx.args;
  if (args.length === 0)
    throw new UsageError('you must specify the type of resource to delete and its name (quota NAME, limitrange/NAME, …) or -f FILE');
  const slashed = args.filter((a) => a.includes('/'));
  if (slashed.length > 0 && slashed.length !== args.length) {
    throw new UsageError(
      'there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. quotactl delete quota/compute)',
    );
  }
  const pairs: [string, string][] =
    slashed.length > 0
      ? args.map((a) => [a.slice(0, a.indexOf('/')), a.slice(a.indexOf('/') + 1)])
      : args.slice(1).map((name) => [args[0] ?? '', name]);
  if (pairs.length === 0) throw new UsageError(`resource(s) were provided, but no name was specified: quotactl delete ${args[0]} NAME`);
  return pairs.map(([rawType, name]) => deletionOf(ctx, rawType.toLowerCase(), name));
}

function deletionOf(ctx: Context, type: string, name: string): Deletion {
  if (name === '') throw new UsageError(`${type}/: the name after / is empty`);
  if (NAMESPACE_TYPES.has(type)) return { path: `/v1/namespaces/${enc(name)}`, singular: 'namespace', name };
  if (RESERVATION_TYPES.has(type)) {
    if (!RESERVATION_ID.test(name))
      throw new UsageError(`${JSON.stringify(name)} is not a reservation id (1-128 letters, digits, '.', '_' or '-')`);
    return { path: namespacePath(ctx.namespace, 'reservations', name), singular: 'reservation', name, reservation: true };
  }
  let resource;
  try {
    resource = resourceAndName('delete', [type, name]).resource;
  } catch (error) {
    if (error instanceof UsageError)
      throw new UsageError(
        `the server doesn't have a resource type "${type}" (quotactl delete knows quota, limitrange, clusterresourcequota, hierarchicalresourcequota, namespace and reservation)`,
      );
    throw error;
  }
  return { path: pathOf(ctx, resource, name), singular: NAME_PREFIX[resource], name };
}

/**
 * Deletes as kubectl does: each object in turn, `resourcequota "compute" deleted` (or with -o
 * name `resourcequota/compute`) for each; a refusal is reported and the others still go, the exit
 * code being the first refusal's; an unreachable server stops at once. With -f, every object of
 * every file is read and checked first, as apply does. A reservation's DELETE releases it.
 */
async function remove(ctx: Context): Promise<ExitCode> {
  const files = ctx.flags.filename ?? [];
  if (files.length > 0 && ctx.args.length > 0)
    throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args[0])}: delete takes either -f FILE or TYPE NAME…`);
  const deletions: Deletion[] =
    files.length > 0
      ? (await targetsOf(ctx, 'delete')).map((t) => ({ path: t.path, singular: t.singular, name: t.name }))
      : deletionsOf(ctx);
  let failure: unknown;
  for (const deletion of deletions) {
    try {
      const { body } = await ctx.client.call<ReservationView>('DELETE', deletion.path);
      if (ctx.output === 'name') ctx.io.stdout(`${deletion.singular}/${deletion.name}\n`);
      else if (deletion.reservation)
        ctx.io.stdout(
          `reservation/${deletion.name} ${body?.state ?? 'released'}${body?.releaseReason ? ` (${body.releaseReason})` : ''}\n`,
        );
      else ctx.io.stdout(`${deletion.singular} "${deletion.name}" deleted\n`);
    } catch (error) {
      if (error instanceof Unavailable || !(error instanceof ApiError)) throw error;
      if (error.status === 404 && ctx.flags['ignore-not-found']) continue;
      ctx.io.stderr(`${errorMessage(error)}\n`);
      failure ??= error;
    }
  }
  return failure === undefined ? EXIT.ok : exitCodeOf(failure);
}

export const deleteCommand: Command = {
  name: 'delete',
  summary: 'delete quotas, limit ranges, namespaces or quotas over namespaces; release reservations',
  synopsis: 'delete (TYPE NAME… | TYPE/NAME… | -f FILE) [-n NS] [--ignore-not-found] [-o name]',
  description: [
    "Sends the API's DELETE for each: quota (resourcequota), limitrange (limits), clusterresourcequota",
    '(clusterquota, cluster-scoped), hierarchicalresourcequota (hrq), namespace (ns) and reservation.',
    'Prints `resourcequota "compute" deleted` per object, or with -o name `resourcequota/compute`. -f',
    "deletes the objects of the files apply takes (every file read and checked first; an object's",
    'own namespace, else -n). A refusal of one is reported and the others still go; the exit code is',
    "the first refusal's (4 when not found, unless --ignore-not-found). Every deletion is recorded",
    "in the ledger with who made it; the definition's history stays readable.",
    'namespace NAME removes the Namespace object apply wrote (its labels): the namespace leaves the',
    'quotas over namespaces that selected it, and the ledger refuses new reservations there',
    '(NamespaceLifecycle); default, kube-system and kube-public are never deleted.',
    "reservation ID is `release ID`: the reservation stops counting and its record stays (the API's",
    'DELETE of a reservation); it prints what release prints.',
  ].join('\n'),
  flags: ['namespace', 'filename', 'ignore-not-found'],
  examples: [
    'quotactl delete quota compute -n team-a',
    'quotactl delete limitrange/defaults quota/compute -n team-a',
    'quotactl delete -f quota.yaml',
    'quotactl delete clusterresourcequota acme --ignore-not-found',
    'quotactl delete reservation 3f6c1e2a-… -n team-a',
  ],
  needsServer: true,
  outputs: ['table', 'name'],
  run: remove,
};
