import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** How a client authenticates: a client certificate (paths) or a bearer token. */
export type Credentials = { clientCertificate: string; clientKey: string } | { token: string };

function user(credentials: Credentials): Record<string, string> {
  return 'token' in credentials
    ? { token: credentials.token }
    : { 'client-certificate': credentials.clientCertificate, 'client-key': credentials.clientKey };
}

/** A one-context kubeconfig (JSON, which kubectl and client libraries read as YAML). */
export function writeKubeconfig(file: string, server: string, caCert: string, credentials: Credentials): string {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority': caCert } }],
    users: [{ name: 'test', user: user(credentials) }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'test', namespace: 'default' } }],
    'current-context': 'test',
  };
  writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
  return file;
}

/**
 * What the kube-apiserver presents when it calls an admission webhook: `server` is the webhook's
 * `host:port` as in its URL (or `*` for every webhook).
 */
export interface WebhookClient {
  readonly server: string;
  readonly credentials: Credentials;
}

export interface AdmissionConfiguration {
  /** Credentials for the ValidatingAdmissionWebhook and MutatingAdmissionWebhook plugins. */
  readonly validatingWebhooks?: readonly WebhookClient[];
  readonly mutatingWebhooks?: readonly WebhookClient[];
  /** Any other plugin's configuration object, by plugin name (e.g. ResourceQuota). */
  readonly plugins?: Readonly<Record<string, unknown>>;
}

/**
 * Writes an AdmissionConfiguration (apiserver.config.k8s.io/v1) into `dir`, with one kubeconfig per
 * webhook plugin whose users are named by webhook `host:port`, as --admission-control-config-file
 * expects; returns its path.
 */
export function writeAdmissionConfiguration(dir: string, configuration: AdmissionConfiguration): string {
  const plugins: { name: string; configuration: unknown }[] = [];
  const webhookPlugin = (name: string, file: string, clients: readonly WebhookClient[] | undefined): void => {
    if (!clients?.length) return;
    const kubeconfig = join(dir, file);
    const users = clients.map((client) => ({ name: client.server, user: user(client.credentials) }));
    writeFileSync(kubeconfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', users }, null, 2), { mode: 0o600 });
    plugins.push({
      name,
      configuration: { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig },
    });
  };
  webhookPlugin('ValidatingAdmissionWebhook', 'validating-webhooks.kubeconfig', configuration.validatingWebhooks);
  webhookPlugin('MutatingAdmissionWebhook', 'mutating-webhooks.kubeconfig', configuration.mutatingWebhooks);
  for (const [name, pluginConfiguration] of Object.entries(configuration.plugins ?? {}))
    plugins.push({ name, configuration: pluginConfiguration });
  const file = join(dir, 'admission-configuration.json');
  writeFileSync(file, JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins }, null, 2));
  return file;
}
