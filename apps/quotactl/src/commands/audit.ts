import type { DecisionView, EventView, Page, SharedUsageAnswer, UsageAnswer } from '../api-types.js';
import { instant, position, wholeNumber } from '../args.js';
import { namespacePath, print, type Command, type Context } from '../context.js';
import { EXIT, UsageError, type ExitCode } from '../errors.js';
import { decisionsTable, historyTable, sharedUsageTable, usageTable } from '../format/table.js';
import { pathOf, resourceAndName } from './get.js';

function noArguments(ctx: Context, command: string): void {
  if (ctx.args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args[0])}: ${command} takes only flags`);
}

/** Paged answers say where the next page starts; the hint goes to stderr so stdout stays the table. */
function nextPageHint(ctx: Context, next: string | undefined): void {
  if (next !== undefined && ctx.output === 'table') ctx.io.stderr(`(more: --after ${next})\n`);
}

/** `usage clusterresourcequota NAME` or `usage hrq NAME -n NS`: a shared quota's total and each namespace's part. */
async function sharedUsage(ctx: Context, at: string | undefined): Promise<ExitCode> {
  const { resource, name } = resourceAndName('usage', ctx.args);
  if (resource !== 'clusterresourcequotas' && resource !== 'hierarchicalresourcequotas') {
    throw new UsageError(`usage takes clusterresourcequota NAME or hrq NAME; a namespace's quotas are \`quotactl usage -n NS\``);
  }
  if (name === undefined) throw new UsageError(`usage ${ctx.args[0] ?? ''}: which one? (a NAME after the type)`);
  const { body } = await ctx.client.call<SharedUsageAnswer>('GET', `${pathOf(ctx, resource, name)}/usage`, undefined, { at });
  print(ctx, body, () => {
    if (body?.defined === false) {
      ctx.io.stderr(`${name} did not exist${at ? ` at ${at}` : ''}.\n`);
      return '';
    }
    return sharedUsageTable(body ?? {});
  });
  return EXIT.ok;
}

async function usage(ctx: Context): Promise<ExitCode> {
  const at = instant(ctx.flags.at, 'at');
  if (ctx.args.length > 0) return sharedUsage(ctx, at);
  const { body } = await ctx.client.call<UsageAnswer>('GET', namespacePath(ctx.namespace, 'usage'), undefined, { at });
  print(ctx, body, () => {
    const quotas = body?.quotas ?? [];
    if (quotas.length === 0) {
      ctx.io.stderr(`No quotas in ${ctx.namespace} namespace${at ? ` at ${at}` : ''}.\n`);
      return '';
    }
    return usageTable(quotas);
  });
  return EXIT.ok;
}

async function history(ctx: Context): Promise<ExitCode> {
  noArguments(ctx, 'history');
  const query = { after: position(ctx.flags.after, 'after'), limit: wholeNumber(ctx.flags.limit, 'limit', 1, 1000)?.toString() };
  const { body } = await ctx.client.call<Page<EventView>>('GET', namespacePath(ctx.namespace, 'events'), undefined, query);
  print(ctx, body, () => historyTable(body?.items ?? []));
  nextPageHint(ctx, body?.next);
  return EXIT.ok;
}

async function decisions(ctx: Context): Promise<ExitCode> {
  noArguments(ctx, 'decisions');
  if (ctx.flags.denied && ctx.flags.allowed) throw new UsageError('--denied and --allowed exclude each other (give neither for both)');
  const order = ctx.flags.order ?? 'newest';
  if (order !== 'newest' && order !== 'oldest') throw new UsageError(`--order takes newest or oldest, got ${JSON.stringify(order)}`);
  const query = {
    allowed: ctx.flags.denied ? 'false' : ctx.flags.allowed ? 'true' : undefined,
    dryRun: ctx.flags['dry-run'] === undefined ? undefined : String(ctx.flags['dry-run']),
    since: instant(ctx.flags.since, 'since'),
    until: instant(ctx.flags.until, 'until'),
    requester: ctx.flags.requester,
    after: position(ctx.flags.after, 'after'),
    limit: wholeNumber(ctx.flags.limit, 'limit', 1, 1000)?.toString(),
    // Oldest first is the server's own default: not sent.
    order: order === 'newest' ? 'newest' : undefined,
  };
  const { body } = await ctx.client.call<Page<DecisionView>>('GET', namespacePath(ctx.namespace, 'decisions'), undefined, query);
  print(ctx, body, () => decisionsTable(body?.items ?? []));
  nextPageHint(ctx, body?.next);
  return EXIT.ok;
}

export const usageCommand: Command = {
  name: 'usage',
  summary: 'usage per quota, now or as it was at an instant',
  synopsis: 'usage [-n NS] [clusterresourcequota NAME | hrq NAME] [--at RFC3339] [-o table|json|yaml]',
  description: [
    'QUOTA, RESOURCE, USED and HARD for every quota of the namespace. Without --at, the exact usage',
    "from the ledger's head; with --at, folded from the ledger as it stood at that instant.",
    'With a ClusterResourceQuota or HierarchicalResourceQuota: its total over the namespaces it',
    'covered (NAMESPACE "(all)") and what each of them contributed, now or at --at.',
  ].join('\n'),
  flags: ['namespace', 'at'],
  examples: [
    'quotactl usage -n team-a',
    'quotactl usage -n team-a --at 2026-11-23T14:03:00Z',
    'quotactl usage clusterresourcequota acme --at 2026-11-23T14:03:00Z',
  ],
  needsServer: true,
  run: usage,
};

export const historyCommand: Command = {
  name: 'history',
  summary: "the namespace's ledger events",
  synopsis: 'history [-n NS] [--after POSITION] [--limit N] [-o table|json|yaml]',
  description: [
    'POSITION, TIME, TYPE, ACTOR and a SUMMARY of every event (quota and limit range definitions,',
    'reservations, commits, releases, adoptions) in stream order, a page at a time; when more',
    'follow, stderr says which --after gives the next page.',
  ].join('\n'),
  flags: ['namespace', 'after', 'limit'],
  examples: ['quotactl history -n team-a --limit 20', 'quotactl history -n team-a --after 1042'],
  needsServer: true,
  run: history,
};

export const decisionsCommand: Command = {
  name: 'decisions',
  summary: 'admission decisions and their explanations',
  synopsis:
    'decisions [-n NS] [--denied|--allowed] [--dry-run=true|false] [--since T] [--until T] [--requester USER] [--order newest|oldest] [--after ID] [--limit N]',
  description: [
    'TIME, ALLOWED, DRY-RUN, KIND, NAME, OPERATION, REQUESTER, REASON (the plugin that refused:',
    'ResourceQuota or LimitRanger) and MESSAGE (the refusal as the API server words it, or what an',
    'allowance charged), newest first, a page at a time: the first page is the latest decisions,',
    'and the --after that stderr offers reads on into older ones. --order oldest reads the log from',
    "its start instead (the API's default order, and decisions/export's). DRY-RUN true: a dry run,",
    'which reserved nothing; --dry-run=false leaves them out. A what-if is a read and is not logged.',
  ].join('\n'),
  flags: ['namespace', 'denied', 'allowed', 'dry-run', 'since', 'until', 'requester', 'order', 'after', 'limit'],
  flagHelp: { 'dry-run': 'only dry runs; --dry-run=false: only the decisions that counted' },
  examples: [
    'quotactl decisions -n team-a --denied --dry-run=false',
    'quotactl decisions -n team-a --since 2026-11-23T00:00:00Z --order oldest -o json',
  ],
  needsServer: true,
  run: decisions,
};
