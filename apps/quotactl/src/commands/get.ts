import { asList, namespacePath, print, type Command, type Context } from '../context.js';
import { EXIT, UsageError, type ExitCode } from '../errors.js';
import { describeLimitRange, describeQuota, joinDescriptions, type LimitRangeObject, type QuotaObject } from '../format/describe.js';
import { limitRangeTable, quotaTable } from '../format/table.js';

type Resource = 'resourcequotas' | 'limitranges';

/** The names kubectl accepts for the two kinds (plural, singular, short name). */
const RESOURCES: Readonly<Record<string, Resource>> = {
  quota: 'resourcequotas',
  quotas: 'resourcequotas',
  resourcequota: 'resourcequotas',
  resourcequotas: 'resourcequotas',
  limitrange: 'limitranges',
  limitranges: 'limitranges',
  limits: 'limitranges',
};

/** `get quota NAME`, `get quota/NAME` or `get quota`: the resource and the optional name. */
function resourceAndName(command: string, args: readonly string[]): { resource: Resource; name: string | undefined } {
  const [first, ...rest] = args;
  if (!first) throw new UsageError(`you must specify the type of resource to ${command}: quota (resourcequota) or limitrange (limits)`);
  const slash = first.indexOf('/');
  const type = (slash < 0 ? first : first.slice(0, slash)).toLowerCase();
  const resource = RESOURCES[type];
  if (!resource) throw new UsageError(`the server doesn't have a resource type "${type}" (quotactl knows quota and limitrange)`);
  const name = slash < 0 ? rest.shift() : first.slice(slash + 1);
  if (name === '') throw new UsageError(`${first}: the name after / is empty`);
  if (rest.length > 0) throw new UsageError(`one name at a time: unexpected ${JSON.stringify(rest[0])}`);
  return { resource, name };
}

async function fetchObjects(ctx: Context, resource: Resource, name: string | undefined): Promise<unknown[]> {
  if (name !== undefined) return [(await ctx.client.call('GET', namespacePath(ctx.namespace, resource, name))).body];
  const { body } = await ctx.client.call<{ items?: unknown[] }>('GET', namespacePath(ctx.namespace, resource));
  return Array.isArray(body?.items) ? body.items : [];
}

function show(command: 'get' | 'describe') {
  return async (ctx: Context): Promise<ExitCode> => {
    const { resource, name } = resourceAndName(command, ctx.args);
    const items = await fetchObjects(ctx, resource, name);
    if (ctx.output !== 'table') {
      print(ctx, name !== undefined ? items[0] : asList(items), () => '');
      return EXIT.ok;
    }
    if (items.length === 0) {
      // kubectl says so on stderr: stdout stays a (empty) table for scripts.
      ctx.io.stderr(`No resources found in ${ctx.namespace} namespace.\n`);
      return EXIT.ok;
    }
    if (command === 'describe') {
      const describe = resource === 'resourcequotas' ? (o: unknown) => describeQuota(o as QuotaObject) : (o: unknown) => describeLimitRange(o as LimitRangeObject);
      ctx.io.stdout(joinDescriptions(items.map(describe)));
    } else {
      ctx.io.stdout(resource === 'resourcequotas' ? quotaTable(items as QuotaObject[], ctx.now()) : limitRangeTable(items as LimitRangeObject[]));
    }
    return EXIT.ok;
  };
}

export const getCommand: Command = {
  name: 'get',
  summary: 'list quotas or limit ranges, or show one',
  synopsis: 'get quota|limitrange [NAME] [-n NS] [-o table|json|yaml]',
  description: [
    'Prints kubectl\'s columns: for quotas NAME, AGE, REQUEST and LIMIT, where REQUEST lists every',
    'resource but limits.* and LIMIT the limits.* ones, each as `resource: used/hard`; for limit',
    'ranges NAME and CREATED AT. `quota` may also be spelled resourcequota(s), `limitrange` as',
    'limitranges or limits, and `quota/NAME` works too. With -o json or yaml it prints the server\'s',
    'object, or a List of them (status.used comes from the projection; its freshness is in the',
    'quota-ledger.io/ annotations).',
  ].join('\n'),
  flags: ['namespace'],
  examples: ['quotactl get quota -n team-a', 'quotactl get quota compute -n team-a -o yaml', 'quotactl get limitrange -n team-a'],
  needsServer: true,
  run: show('get'),
};

export const describeCommand: Command = {
  name: 'describe',
  summary: 'show quotas or limit ranges as kubectl describe does',
  synopsis: 'describe quota|limitrange [NAME] [-n NS]',
  description: [
    'For a quota: Name, Namespace, its Scopes with what each means, then the Resource / Used / Hard',
    'table, resources in name order. For a limit range: the Type / Resource / Min / Max / Default',
    'Request / Default Limit / Max Limit/Request Ratio table, `-` where an item sets nothing.',
    'Without NAME, every one in the namespace, separated as kubectl separates them.',
  ].join('\n'),
  flags: ['namespace'],
  examples: ['quotactl describe quota -n team-a', 'quotactl describe limitrange defaults -n team-a'],
  needsServer: true,
  run: show('describe'),
};
