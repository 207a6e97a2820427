import { parseCustomResources } from '@quota/config';
import { parseLabelSelector, type LabelSelector } from '@quota/domain';
import { wholeNumber } from '../args.js';
import { asList, objectNames, readInput, serialize, type Command, type Context } from '../context.js';
import { EXIT, UsageError, type ExitCode } from '../errors.js';
import {
  customResourceRbac,
  toYaml,
  webhookConfiguration,
  type FailurePolicy,
  type SentNamespaces,
  type WebhookConfigurationOptions,
} from '../webhook-config.js';

/** Needs no server: it only turns the CA file and the flags into the two configurations. */
async function webhookConfig(ctx: Context): Promise<ExitCode> {
  const { flags } = ctx;
  if (ctx.args.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(ctx.args[0])}: webhook-config takes only flags`);
  const caFile = flags['ca-file'];
  if (!caFile) throw new UsageError("webhook-config needs --ca-file (the CA that signed the API's serving certificate)");
  const byService = flags['service-namespace'] !== undefined || flags['service-name'] !== undefined || flags['service-port'] !== undefined;
  if (flags.url !== undefined && byService) throw new UsageError('give --url, or --service-namespace and --service-name, not both');
  if (flags.url === undefined && !(flags['service-namespace'] && flags['service-name'])) {
    throw new UsageError('webhook-config needs --url https://…, or --service-namespace and --service-name');
  }
  const policy = failurePolicy(flags['failure-policy'], 'failure-policy');
  const countPolicy = failurePolicy(flags['count-failure-policy'], 'count-failure-policy');
  const timeoutSeconds = wholeNumber(flags['timeout-seconds'], 'timeout-seconds', 1, 30);
  const port = wholeNumber(flags['service-port'], 'service-port', 1, 65535);
  const namespaceSelector = selector(flags['namespace-selector'], 'namespace-selector');
  const namespaces = flags.namespaces;
  if (namespaces !== undefined && namespaces !== 'managed' && namespaces !== 'all')
    throw new UsageError(`--namespaces must be managed or all, got ${JSON.stringify(namespaces)}`);
  const objectSelector = selector(flags['object-selector'], 'object-selector');
  const customResources = parseCustomResources(flags['custom-resource'] ?? []);
  if (typeof customResources === 'string') throw new UsageError(`--custom-resource ${customResources}`);
  const caBundlePem = await readInput(ctx.io, caFile);

  const common = {
    caBundlePem,
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    ...(policy !== undefined ? { failurePolicy: policy } : {}),
    ...(countPolicy !== undefined ? { countFailurePolicy: countPolicy } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    ...(namespaceSelector !== undefined ? { namespaceSelector } : {}),
    ...(namespaces !== undefined ? { namespaces: namespaces as SentNamespaces } : {}),
    ...(objectSelector !== undefined ? { objectSelector } : {}),
    ...(customResources.length > 0 ? { customResources } : {}),
  };
  const options: WebhookConfigurationOptions =
    flags.url !== undefined
      ? { ...common, url: flags.url }
      : {
          ...common,
          service: {
            namespace: flags['service-namespace'] ?? '',
            name: flags['service-name'] ?? '',
            ...(port !== undefined ? { port } : {}),
          },
        };
  let docs: object[];
  try {
    docs = webhookConfiguration(options);
    // The reconciler must list them too, or their reservations are only ever released as uncovered.
    if (customResources.length > 0)
      docs.push(
        ...customResourceRbac(customResources, {
          ...(flags.name !== undefined ? { name: flags.name } : {}),
          namespace: flags['service-namespace'] ?? 'quota-ledger',
        }),
      );
  } catch (error) {
    // The generator checks what the flags said (URL, names, CA text): the user's input, so exit 2.
    throw new UsageError((error instanceof Error ? error.message : String(error)).replace(/^webhook-config: /, ''));
  }
  if (ctx.output === 'name')
    ctx.io.stdout(
      objectNames(asList(docs))
        .map((name) => `${name}\n`)
        .join(''),
    );
  else ctx.io.stdout(ctx.output === 'json' ? serialize(asList(docs), 'json') : toYaml(docs));
  return EXIT.ok;
}

function failurePolicy(raw: string | undefined, flag: string): FailurePolicy | undefined {
  if (raw !== undefined && raw !== 'Fail' && raw !== 'Ignore')
    throw new UsageError(`--${flag} must be Fail or Ignore, got ${JSON.stringify(raw)}`);
  return raw;
}

/** A label selector flag, in kubectl's syntax. */
function selector(raw: string | undefined, flag: string): LabelSelector | undefined {
  if (raw === undefined) return undefined;
  const parsed = parseLabelSelector(raw);
  if (!parsed.ok) throw new UsageError(`--${flag} ${JSON.stringify(raw)}: ${parsed.error}`);
  return parsed.selector;
}

export const webhookConfigCommand: Command = {
  name: 'webhook-config',
  summary: 'print the Mutating/ValidatingWebhookConfiguration that registers the API with a cluster',
  synopsis:
    'webhook-config --ca-file CA.pem (--url https://… | --service-namespace NS --service-name NAME [--service-port 443]) [--failure-policy Fail|Ignore] [--count-failure-policy Ignore|Fail] [--timeout-seconds N] [--namespaces managed|all] [--namespace-selector SELECTOR] [--object-selector SELECTOR] [--custom-resource R.GROUP/VERSION=Kind]… [--name NAME]',
  description: [
    'Writes both configurations as one YAML stream for `kubectl apply -f -` (-o json: a List). Needs',
    'no server. caBundle is the CA file, base64-encoded. mutate.quota-ledger.io (LimitRange defaults',
    'of pods and claims) and mutate-definitions.quota-ledger.io (the author of LimitRanges and',
    'Ledger*Quotas) are Fail unless --failure-policy says otherwise. The validating configuration',
    'calls one route: validate.quota-ledger.io (pods, claims, services, resource claims) with',
    '--failure-policy, Fail unless told otherwise; validate-count.quota-ledger.io (the CREATE of',
    'every other namespaced kind, CRDs included, less what quota never charges, by a matchCondition;',
    'the DELETE of the count-only kinds: what quota only counts, count/<resource>.<group>) with',
    '--count-failure-policy, Ignore unless told otherwise, so that an outage of the ledger does not',
    'refuse them (the reconciler adopts what was admitted meanwhile); validate-namespaces (the',
    'Namespaces the ledger manages, --failure-policy) and validate-unmanaged-namespaces (the others,',
    'Ignore). By default (--namespaces managed) only namespaces labelled quota-ledger.io/managed',
    '(the reconciler labels those the ledger manages, before their first count) are sent pods,',
    'claims, services and the counted kinds; --namespaces all sends every namespace, as before.',
    'timeoutSeconds 10, matchPolicy Equivalent, and the mutating webhook is called again',
    '(reinvocationPolicy IfNeeded) when a later mutator changes the pod. kube-system and the',
    "service's own namespace are never sent to the webhooks: --namespace-selector narrows the rest,",
    'it cannot add them back. Both selectors apply to both webhooks; an object selector lets whoever',
    'labels an object opt it out of quota.',
    'Each --custom-resource widgets.example.com/v1=Widget (as CUSTOM_RESOURCES names them; repeat it)',
    "adds the resource's DELETE to the count webhook's rules (its CREATE is sent already), and a",
    'ClusterRole and ClusterRoleBinding are printed after the configurations so the reconciler',
    "(service account quota-ledger-reconciler in the service's namespace) may list and watch it. Set",
    "the same list in the reconciler's CUSTOM_RESOURCES.",
  ].join('\n'),
  flags: [
    'ca-file',
    'url',
    'service-namespace',
    'service-name',
    'service-port',
    'failure-policy',
    'count-failure-policy',
    'timeout-seconds',
    'namespaces',
    'namespace-selector',
    'object-selector',
    'custom-resource',
    'name',
  ],
  flagHelp: {
    name: 'metadata.name of both configurations (default quota-ledger)',
    output: 'yaml (default), json, or name (kind.group/name of each object)',
  },
  examples: [
    'quotactl webhook-config --ca-file ca.crt --service-namespace quota-ledger --service-name quota-ledger | kubectl apply -f -',
    'quotactl webhook-config --ca-file ca.crt --url https://quota-ledger.example.com --failure-policy Ignore',
    "quotactl webhook-config --ca-file ca.crt --service-namespace quota-ledger --service-name quota-ledger --namespace-selector 'env=prod,team in (a,b),!legacy'",
    'quotactl webhook-config --ca-file ca.crt --service-namespace quota-ledger --service-name quota-ledger --custom-resource widgets.example.com/v1=Widget',
  ],
  needsServer: false,
  outputs: ['table', 'json', 'yaml', 'name'],
  run: webhookConfig,
};
