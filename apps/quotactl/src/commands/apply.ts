import { ApiError, Unavailable } from '../client.js';
import { asList, namespacePath, print, readInput, type Command, type Context } from '../context.js';
import { EXIT, UsageError, errorMessage, exitCodeOf, type ExitCode } from '../errors.js';
import { identity, parseObjects, targetNamespace, type KubeObject } from '../manifests.js';

/** The kinds apply manages, with the path segment and the name kubectl prints for each. */
const KINDS: Readonly<Record<string, { readonly resource: string; readonly singular: string }>> = {
  ResourceQuota: { resource: 'resourcequotas', singular: 'resourcequota' },
  LimitRange: { resource: 'limitranges', singular: 'limitrange' },
};

interface Target {
  readonly object: KubeObject;
  readonly source: string;
  readonly resource: string;
  readonly singular: string;
  readonly namespace: string;
  readonly name: string;
}

function target(object: KubeObject, source: string, flagNamespace: string | undefined): Target {
  const kind = typeof object.kind === 'string' ? object.kind : undefined;
  if (!kind) throw new UsageError(`error validating ${source}: kind not set`);
  const known = KINDS[kind];
  if (!known) throw new UsageError(`${source}: apply handles ResourceQuota and LimitRange objects, not "${kind}"`);
  if (object.apiVersion !== undefined && object.apiVersion !== 'v1') throw new UsageError(`${source}: a ${kind} is apiVersion v1, not ${JSON.stringify(object.apiVersion)}`);
  const { name } = identity(object);
  if (!name) throw new UsageError(`error validating ${source}: ${kind} has no metadata.name`);
  return { object, source, ...known, namespace: targetNamespace(object, flagNamespace), name };
}

/**
 * Reads and checks every object of every file before the first request (a typo in the third
 * document must not leave the first two applied), then PUTs them in order. A refusal of one
 * object is reported and the others are still applied, as kubectl does; an unreachable
 * server stops at once.
 *
 * "unchanged" needs the object's resourceVersion from before the PUT: the server does not
 * bump it when the body equals what it stores, so a GET first tells configured from unchanged.
 */
async function apply(ctx: Context): Promise<ExitCode> {
  const files = ctx.flags.filename ?? [];
  if (files.length === 0) throw new UsageError('must specify -f FILE (-f - reads standard input)');
  if (ctx.args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args[0])}: apply takes its objects from -f`);
  if (files.filter((f) => f === '-').length > 1) throw new UsageError('standard input (-f -) can be read only once');

  const targets: Target[] = [];
  for (const file of files) {
    const objects = parseObjects(await readInput(ctx.io, file), file === '-' ? 'standard input' : file);
    for (const { object, source } of objects) targets.push(target(object, source, ctx.namespaceGiven ? ctx.namespace : undefined));
  }
  if (targets.length === 0) throw new UsageError('no objects passed to apply');

  const applied: unknown[] = [];
  let failure: unknown;
  for (const t of targets) {
    const path = namespacePath(t.namespace, t.resource, t.name);
    try {
      const before = await previousVersion(ctx, path);
      const { status, body } = await ctx.client.call<{ metadata?: { resourceVersion?: string } }>('PUT', path, t.object);
      applied.push(body);
      const after = body?.metadata?.resourceVersion;
      const word = status === 201 ? 'created' : before !== undefined && after !== undefined && before === after ? 'unchanged' : 'configured';
      if (ctx.output === 'table') ctx.io.stdout(`${t.singular}/${t.name} ${word}\n`);
    } catch (error) {
      if (error instanceof Unavailable || !(error instanceof ApiError)) throw error;
      ctx.io.stderr(`${errorMessage(error)}\n`);
      failure ??= error;
    }
  }
  if (ctx.output !== 'table' && applied.length > 0) print(ctx, applied.length === 1 && targets.length === 1 ? applied[0] : asList(applied), () => '');
  return failure === undefined ? EXIT.ok : exitCodeOf(failure);
}

/** The stored resourceVersion, or undefined when there is none (404) or it cannot be read. */
async function previousVersion(ctx: Context, path: string): Promise<string | undefined> {
  const answer = await ctx.client.send('GET', path);
  if (answer.status !== 200) return undefined;
  const version = (answer.body as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata?.resourceVersion;
  return typeof version === 'string' ? version : undefined;
}

export const applyCommand: Command = {
  name: 'apply',
  summary: 'create or replace ResourceQuota and LimitRange objects from files',
  synopsis: 'apply -f FILE [-f FILE …] [-n NS] [-o json|yaml]',
  description: [
    'PUTs every ResourceQuota and LimitRange of a YAML or JSON stream (several documents, or a',
    '`kind: List`). An object without metadata.namespace goes to -n (default "default"); one whose',
    'namespace disagrees with -n is refused. Prints, per object, `resourcequota/NAME created`,',
    '`configured` (replaced) or `unchanged` (the server already held exactly this). Every file is',
    'read and checked before anything is sent; metadata.resourceVersion, when present, makes the',
    'write conditional (409 Conflict if the object changed since).',
  ].join('\n'),
  flags: ['filename', 'namespace'],
  examples: ['quotactl apply -f quota.yaml', 'cat limits.json | quotactl apply -f - -n team-a'],
  needsServer: true,
  run: apply,
};
