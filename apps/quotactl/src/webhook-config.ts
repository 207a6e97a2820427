import { stringify } from 'yaml';
import { MANAGED_NAMESPACE_LABEL, validateLabelSelector, type LabelSelector, type LabelSelectorRequirement } from '@quota/domain';
import {
  COUNT_MATCH_CONDITIONS,
  groupsOf,
  MUTATE_DEFINITION_RULES,
  MUTATE_RULES,
  NAMESPACE_RULE,
  validateWebhookRules,
  type CustomResource,
  type MatchCondition,
  type RuleWithOperations,
} from './webhook-rules.js';

export type { LabelSelector, LabelSelectorRequirement } from '@quota/domain';
export {
  COUNT_MATCH_CONDITIONS,
  EVERY_KIND_CREATE,
  MUTATE_DEFINITION_RULES,
  MUTATE_RULES,
  NAMESPACE_RULE,
  VALIDATE_RULES,
  validateRules,
  validateWebhookRules,
  type CustomResource,
  type MatchCondition,
  type RuleWithOperations,
} from './webhook-rules.js';

/**
 * The MutatingWebhookConfiguration and ValidatingWebhookConfiguration that register the
 * admission API with a kube-apiserver (`quotactl webhook-config`). Pure: the caller reads the
 * CA file and writes the output, so every rule here is testable without a cluster.
 */

export const MUTATE_PATH = '/v1/admission/mutate';
export const VALIDATE_PATH = '/v1/admission/validate';
export const DEFAULT_NAME = 'quota-ledger';
export const DEFAULT_TIMEOUT_SECONDS = 10;
/** kube-apiserver refuses a webhook timeout above 30 s. */
export const MAX_TIMEOUT_SECONDS = 30;

export type FailurePolicy = 'Fail' | 'Ignore';

/**
 * Which namespaces' writes the webhooks are sent: `managed` (the default), only those the ledger
 * manages, labelled MANAGED_NAMESPACE_LABEL by the reconciler before their first count, so that a
 * ledger outage refuses nothing where no quota was ever defined; `all`, every namespace, as before
 * the label existed. Either way kube-system and the API's own namespace are left out.
 */
export type SentNamespaces = 'managed' | 'all';
export const DEFAULT_SENT_NAMESPACES: SentNamespaces = 'managed';

export interface WebhookServiceRef {
  readonly namespace: string;
  readonly name: string;
  /** The Service's port (not the pod's); 443 by default, as in Kubernetes. */
  readonly port?: number;
}

interface CommonOptions {
  /** The PEM text of the CA that signed the API's serving certificate. */
  readonly caBundlePem: string;
  /** metadata.name of both configurations; a DNS label. */
  readonly name?: string;
  /** Mutate and the validating webhook of the charged kinds; `Fail` by default (see `DEFAULT_FAILURE_POLICY`). */
  readonly failurePolicy?: FailurePolicy;
  /** The validating webhook of the count-only kinds; `Ignore` by default (see `DEFAULT_COUNT_FAILURE_POLICY`). */
  readonly countFailurePolicy?: FailurePolicy;
  readonly timeoutSeconds?: number;
  /**
   * Namespaces whose requests are sent, by their labels. Whatever it says, kube-system and the
   * API's own namespace stay excluded (see `excludedNamespaces`); absent, every other namespace is sent.
   */
  readonly namespaceSelector?: LabelSelector;
  /** Objects whose requests are sent, by their own labels; absent (`{}`), every object. */
  readonly objectSelector?: LabelSelector;
  /**
   * Custom resources quota counts (`count/<resource>.<group>`), as CUSTOM_RESOURCES names them: their
   * CREATE is sent like every kind's, and their DELETE too, for a release at once.
   */
  readonly customResources?: readonly CustomResource[];
  /** `managed` by default (DEFAULT_SENT_NAMESPACES). */
  readonly namespaces?: SentNamespaces;
}

export type WebhookConfigurationOptions =
  | (CommonOptions & { readonly url: string; readonly service?: undefined })
  | (CommonOptions & { readonly service: WebhookServiceRef; readonly url?: undefined });

export interface WebhookClientConfig {
  readonly caBundle: string;
  readonly url?: string;
  readonly service?: { readonly namespace: string; readonly name: string; readonly path: string; readonly port: number };
}

export interface Webhook {
  readonly name: string;
  readonly clientConfig: WebhookClientConfig;
  readonly rules: readonly RuleWithOperations[];
  /** CEL conditions every request the rules match must meet to be sent (the count webhook's). */
  readonly matchConditions?: readonly MatchCondition[];
  readonly failurePolicy: FailurePolicy;
  readonly matchPolicy: 'Equivalent';
  readonly namespaceSelector: LabelSelector;
  readonly objectSelector: LabelSelector;
  readonly sideEffects: 'None' | 'NoneOnDryRun';
  readonly timeoutSeconds: number;
  readonly admissionReviewVersions: readonly string[];
}

export interface MutatingWebhook extends Webhook {
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
}

export interface MutatingWebhookConfiguration {
  readonly apiVersion: 'admissionregistration.k8s.io/v1';
  readonly kind: 'MutatingWebhookConfiguration';
  readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> };
  readonly webhooks: readonly MutatingWebhook[];
}

export interface ValidatingWebhookConfiguration {
  readonly apiVersion: 'admissionregistration.k8s.io/v1';
  readonly kind: 'ValidatingWebhookConfiguration';
  readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> };
  readonly webhooks: readonly Webhook[];
}

/**
 * `Fail` for mutate and for the validating webhook of the charged kinds (pods, claims, services,
 * resource claims, Namespaces), as Kubernetes recommends for policy enforcement. For validate it
 * is the whole point: with `Ignore`, an outage of the API admits pods and claims no quota has
 * checked; the reconciler adopts them afterwards, but the CPU, memory and storage they hold
 * while over the limit cannot be taken back. Mutate is policy too, not a convenience: a
 * pod admitted without its LimitRange defaults runs without the limits the namespace imposes,
 * and validate then charges the quota for the requests it lacks (under-counting), or denies it
 * for a missing request with a confusing message; `Fail` says plainly that the webhook is
 * unavailable, and the request can be retried. The API's own namespace and kube-system are
 * always excluded (`excludedNamespaces`) so that `Fail` cannot lock the API (or the control
 * plane) out of restarting itself.
 */
export const DEFAULT_FAILURE_POLICY: FailurePolicy = 'Fail';

/**
 * `Ignore` for what quota only counts (every kind's CREATE but the charged ones: ConfigMaps,
 * Secrets, the workload controllers, Roles, Leases, custom resources): their writes are the
 * cluster's plumbing (every `helm install` writes a release Secret, controllers and operators
 * write ConfigMaps and Leases), and under `Fail` all of it stops while the ledger is down. What
 * `Ignore` admits meanwhile is an object count only, never compute, storage or a load balancer
 * (the pods a Deployment makes are still refused under `Fail`), and nothing is lost: the
 * reconciler lists every kind and appends an `Adopted` event for each object nobody reserved, so
 * the count is right again within one interval; a quota it puts over its hard limit refuses
 * further objects until some are deleted.
 */
export const DEFAULT_COUNT_FAILURE_POLICY: FailurePolicy = 'Ignore';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The options, checked, and what every webhook is made of. */
interface Settings {
  readonly name: string;
  readonly managed: boolean;
  /** Every namespace but kube-system and the API's own (and the caller's selector). */
  readonly everywhere: LabelSelector;
  readonly namespaceSelector: LabelSelector;
  readonly objectSelector: LabelSelector;
  readonly failurePolicy: FailurePolicy;
  readonly countFailurePolicy: FailurePolicy;
  readonly common: (
    path: string,
    policy?: FailurePolicy,
    selectors?: Pick<Webhook, 'namespaceSelector' | 'objectSelector'>,
  ) => Omit<Webhook, 'name' | 'rules' | 'sideEffects'>;
}

function settingsOf(options: WebhookConfigurationOptions): Settings {
  const name = options.name ?? DEFAULT_NAME;
  if (!DNS_LABEL.test(name))
    throw new Error(`webhook-config: name ${JSON.stringify(name)} must be a DNS label (lower-case letters, digits and '-', at most 63)`);
  const caBundle = encodeCaBundle(options.caBundlePem);
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
    throw new Error(
      `webhook-config: timeoutSeconds must be a whole number from 1 to ${MAX_TIMEOUT_SECONDS}, got ${String(timeoutSeconds)}`,
    );
  }
  const failurePolicy = checkedPolicy(options.failurePolicy ?? DEFAULT_FAILURE_POLICY, 'failurePolicy');
  const countFailurePolicy = checkedPolicy(options.countFailurePolicy ?? DEFAULT_COUNT_FAILURE_POLICY, 'countFailurePolicy');
  const target = clientTarget(options);
  const managed = sentNamespaces(options.namespaces) === 'managed';
  const everywhere = withExcluded(checkedSelector(options.namespaceSelector, 'namespaceSelector') ?? {}, excludedNamespaces(options));
  // Of those, only the managed ones (by default).
  const namespaceSelector = managed ? withRequirement(everywhere, { key: MANAGED_NAMESPACE_LABEL, operator: 'Exists' }) : everywhere;
  const objectSelector = checkedSelector(options.objectSelector, 'objectSelector') ?? {};
  const common: Settings['common'] = (path, policy = failurePolicy, selectors = { namespaceSelector, objectSelector }) => ({
    clientConfig: { caBundle, ...target(path) },
    failurePolicy: policy,
    matchPolicy: 'Equivalent' as const,
    ...selectors,
    timeoutSeconds,
    admissionReviewVersions: ['v1'],
  });
  return { name, managed, everywhere, namespaceSelector, objectSelector, failurePolicy, countFailurePolicy, common };
}

export function webhookConfiguration(options: WebhookConfigurationOptions): [MutatingWebhookConfiguration, ValidatingWebhookConfiguration] {
  const settings = settingsOf(options);
  const labels = { 'app.kubernetes.io/name': 'quota-ledger', 'app.kubernetes.io/managed-by': 'quotactl' };
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: settings.name, labels },
      webhooks: mutatingWebhooks(settings),
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: settings.name, labels },
      webhooks: validatingWebhooks(settings, validateWebhookRules(options.customResources ?? [])),
    },
  ];
}

function mutatingWebhooks({ name, common, failurePolicy, everywhere, objectSelector }: Settings): MutatingWebhook[] {
  return [
    {
      name: webhookName('mutate', name),
      ...common(MUTATE_PATH),
      rules: MUTATE_RULES,
      // mutate writes nothing, not even a decision, so it may be called for dry runs freely.
      sideEffects: 'None',
      // A mutator after us may add a container (a sidecar injector): called again, we give it its
      // LimitRange defaults too, or validate would charge (or refuse) a container without them.
      // Defaults only fill what is missing, so a call that has nothing to add patches nothing.
      reinvocationPolicy: 'IfNeeded',
    },
    {
      name: webhookName('mutate-definitions', name),
      ...common(MUTATE_PATH, failurePolicy, { namespaceSelector: everywhere, objectSelector }),
      rules: MUTATE_DEFINITION_RULES,
      sideEffects: 'None',
      reinvocationPolicy: 'Never',
    },
  ];
}

function validatingWebhooks(settings: Settings, rules: ReturnType<typeof validateWebhookRules>): Webhook[] {
  const { name, common, managed, everywhere, objectSelector, failurePolicy, countFailurePolicy } = settings;
  // A Namespace's own writes: matched by its labels (old or new, for objectSelector), so a managed
  // namespace's are sent whatever it becomes, under failurePolicy; the others' only to read them.
  const namespaces = (operator: 'Exists' | 'DoesNotExist') => ({
    namespaceSelector: everywhere,
    objectSelector: withRequirement(objectSelector, { key: MANAGED_NAMESPACE_LABEL, operator }),
  });
  return [
    // validate appends a reservation, but never for a dry run.
    { name: webhookName('validate', name), ...common(VALIDATE_PATH), rules: rules.charged, sideEffects: 'NoneOnDryRun' },
    // The same route for the kinds quota only counts, under their own failure policy.
    {
      name: webhookName('validate-count', name),
      ...common(VALIDATE_PATH, countFailurePolicy),
      rules: rules.countOnly,
      matchConditions: COUNT_MATCH_CONDITIONS,
      sideEffects: 'NoneOnDryRun',
    },
    {
      name: webhookName('validate-namespaces', name),
      ...common(VALIDATE_PATH, failurePolicy, managed ? namespaces('Exists') : { namespaceSelector: everywhere, objectSelector }),
      rules: [NAMESPACE_RULE],
      sideEffects: 'NoneOnDryRun',
    },
    // The namespaces the ledger does not manage: their relabels are read at once (one may come
    // under a shared quota), but an outage of the ledger must not stop creating them.
    ...(managed
      ? [
          {
            name: webhookName('validate-unmanaged-namespaces', name),
            ...common(VALIDATE_PATH, 'Ignore', namespaces('DoesNotExist')),
            rules: [NAMESPACE_RULE],
            sideEffects: 'NoneOnDryRun' as const,
          },
        ]
      : []),
  ];
}

/**
 * What the reconciler needs beyond deploy/kubernetes/base/rbac.yaml to list and watch the custom resources
 * (its kubernetes inventory lists every kind it covers; one forbidden list fails the listing): a
 * ClusterRole `NAME-reconciler-custom-resources` and its binding to the reconciler's service account.
 */
export function customResourceRbac(
  customResources: readonly CustomResource[],
  options: { readonly name?: string; readonly namespace: string },
): object[] {
  const name = `${options.name ?? DEFAULT_NAME}-reconciler-custom-resources`;
  const labels = {
    'app.kubernetes.io/name': 'quota-ledger',
    'app.kubernetes.io/component': 'reconciler',
    'app.kubernetes.io/managed-by': 'quotactl',
  };
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules: groupsOf(customResources).map(([group, kinds]) => ({
        apiGroups: [group],
        resources: kinds.map((k) => k.groupResource.resource),
        verbs: ['get', 'list', 'watch'],
      })),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: RECONCILER_SERVICE_ACCOUNT, namespace: options.namespace }],
    },
  ];
}

/** The reconciler's service account in deploy/kubernetes/base/rbac.yaml. */
export const RECONCILER_SERVICE_ACCOUNT = 'quota-ledger-reconciler';

/** The documents as one multi-document YAML stream, ready for `kubectl apply -f -`. */
export function toYaml(docs: readonly object[]): string {
  // lineWidth 0: a folded caBundle would still parse, but is miserable to diff or grep. No
  // anchors: both validating webhooks share their selectors, and each should read whole.
  return docs.map((doc) => stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}

function encodeCaBundle(pem: string): string {
  if (typeof pem !== 'string' || !pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(
      'webhook-config: the CA bundle must be PEM text containing "-----BEGIN CERTIFICATE-----" (pass the CA certificate file, not its base64 or DER form)',
    );
  }
  // A key next to the certificate means the wrong file was passed, and it would be published in the cluster.
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new Error('webhook-config: the CA bundle contains a private key; pass only the CA certificate');
  }
  return Buffer.from(pem, 'utf8').toString('base64');
}

function clientTarget(options: WebhookConfigurationOptions): (path: string) => Pick<WebhookClientConfig, 'url' | 'service'> {
  const { url, service } = options;
  if ((url === undefined) === (service === undefined))
    throw new Error('webhook-config: give either url or service, not both and not neither');
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`webhook-config: url ${JSON.stringify(url)} is not a URL`);
    }
    if (parsed.protocol !== 'https:')
      throw new Error(`webhook-config: url must use https (kube-apiserver calls webhooks over TLS only), got ${parsed.protocol}`);
    // kube-apiserver rejects these in clientConfig.url.
    if (parsed.username || parsed.password) throw new Error('webhook-config: url must not contain user info');
    if (parsed.search || parsed.hash) throw new Error('webhook-config: url must not contain a query or a fragment');
    const base = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
    return (path) => ({ url: `${base}${path}` });
  }
  const ref = service as WebhookServiceRef;
  if (!DNS_LABEL.test(ref.namespace) || !DNS_LABEL.test(ref.name)) {
    throw new Error(
      `webhook-config: service ${JSON.stringify(`${ref.namespace}/${ref.name}`)} must be a namespace and a name that are DNS labels`,
    );
  }
  const port = ref.port ?? 443;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`webhook-config: service port must be from 1 to 65535, got ${String(port)}`);
  return (path) => ({ service: { namespace: ref.namespace, name: ref.name, path, port } });
}

/** kube-apiserver wants a fully qualified name (three segments or more), unique in its configuration. */
function webhookName(
  operation: 'mutate' | 'mutate-definitions' | 'validate' | 'validate-count' | 'validate-namespaces' | 'validate-unmanaged-namespaces',
  name: string,
): string {
  return name === DEFAULT_NAME ? `${operation}.quota-ledger.io` : `${operation}.${name}.quota-ledger.io`;
}

function checkedPolicy(policy: FailurePolicy, option: string): FailurePolicy {
  if (policy !== 'Fail' && policy !== 'Ignore')
    throw new Error(`webhook-config: ${option} must be Fail or Ignore, got ${JSON.stringify(policy)}`);
  return policy;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * Never sent to the webhooks, whatever the selector: kube-system (the control plane must be able
 * to restart without us) and the API's own namespace (with `Fail`, its pods could not be created
 * while none answers: a deadlock). Reached by url, the API's namespace is unknown: the default
 * name stands in for it.
 */
function excludedNamespaces(options: WebhookConfigurationOptions): string[] {
  return unique(['kube-system', options.service?.namespace ?? DEFAULT_NAME]);
}

/** The selector ANDed with "not one of these namespaces" (a selector's requirements must all hold). */
function withExcluded(selector: LabelSelector, namespaces: readonly string[]): LabelSelector {
  return withRequirement(selector, { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: namespaces });
}

function withRequirement(selector: LabelSelector, requirement: LabelSelectorRequirement): LabelSelector {
  return { ...selector, matchExpressions: [...(selector.matchExpressions ?? []), requirement] };
}

function sentNamespaces(namespaces: SentNamespaces | undefined): SentNamespaces {
  const chosen = namespaces ?? DEFAULT_SENT_NAMESPACES;
  if (chosen !== 'managed' && chosen !== 'all')
    throw new Error(`webhook-config: namespaces must be managed or all, got ${JSON.stringify(chosen)}`);
  return chosen;
}

/** A selector as kube-apiserver would validate it, the option named in the error. */
function checkedSelector(selector: LabelSelector | undefined, option: string): LabelSelector | undefined {
  const problems = validateLabelSelector(selector, option);
  if (problems.length > 0) throw new Error(`webhook-config: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
  return selector;
}
