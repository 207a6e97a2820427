import { wholeNumber } from '../args.js';
import { asList, readInput, serialize, type Command, type Context } from '../context.js';
import { EXIT, UsageError, type ExitCode } from '../errors.js';
import { toYaml, webhookConfiguration, type FailurePolicy, type WebhookConfigurationOptions } from '../webhook-config.js';

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
  const policy = flags['failure-policy'];
  if (policy !== undefined && policy !== 'Fail' && policy !== 'Ignore') throw new UsageError(`--failure-policy must be Fail or Ignore, got ${JSON.stringify(policy)}`);
  const timeoutSeconds = wholeNumber(flags['timeout-seconds'], 'timeout-seconds', 1, 30);
  const port = wholeNumber(flags['service-port'], 'service-port', 1, 65535);
  const caBundlePem = await readInput(ctx.io, caFile);

  const common = {
    caBundlePem,
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    ...(policy !== undefined ? { failurePolicy: policy as FailurePolicy } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
  };
  const options: WebhookConfigurationOptions =
    flags.url !== undefined
      ? { ...common, url: flags.url }
      : { ...common, service: { namespace: flags['service-namespace'] ?? '', name: flags['service-name'] ?? '', ...(port !== undefined ? { port } : {}) } };
  let docs;
  try {
    docs = webhookConfiguration(options);
  } catch (error) {
    // The generator checks what the flags said (URL, names, CA text): the user's input, so exit 2.
    throw new UsageError((error instanceof Error ? error.message : String(error)).replace(/^webhook-config: /, ''));
  }
  ctx.io.stdout(ctx.output === 'json' ? serialize(asList(docs), 'json') : toYaml(docs));
  return EXIT.ok;
}

export const webhookConfigCommand: Command = {
  name: 'webhook-config',
  summary: 'print the Mutating/ValidatingWebhookConfiguration that registers the API with a cluster',
  synopsis: 'webhook-config --ca-file CA.pem (--url https://… | --service-namespace NS --service-name NAME [--service-port 443]) [--failure-policy Fail|Ignore] [--timeout-seconds N] [--name NAME]',
  description: [
    'Writes both configurations as one YAML stream for `kubectl apply -f -` (-o json: a List). Needs',
    'no server. caBundle is the CA file, base64-encoded; failurePolicy is Fail unless told otherwise,',
    'timeoutSeconds 10, and kube-system and the service\'s own namespace are never sent to the webhook.',
  ].join('\n'),
  flags: ['ca-file', 'url', 'service-namespace', 'service-name', 'service-port', 'failure-policy', 'timeout-seconds', 'name'],
  flagHelp: { name: 'metadata.name of both configurations (default quota-ledger)', output: 'yaml (default) or json' },
  examples: [
    'quotactl webhook-config --ca-file ca.crt --service-namespace quota-ledger --service-name quota-ledger | kubectl apply -f -',
    'quotactl webhook-config --ca-file ca.crt --url https://quota-ledger.example.com --failure-policy Ignore',
  ],
  needsServer: false,
  run: webhookConfig,
};
