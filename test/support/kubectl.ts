import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

// kubectl for the tests that run a real control plane (test/support/control-plane.ts).

/** The kubectl the tests drive (1.32 on these machines; KUBECTL overrides). */
export const KUBECTL = process.env.KUBECTL ?? (existsSync('/usr/bin/kubectl') ? '/usr/bin/kubectl' : 'kubectl');

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export type Kubectl = (args: readonly string[], input?: string) => Promise<string>;
export type TryKubectl = (args: readonly string[], input?: string) => Promise<KubectlResult>;

/** Runs kubectl against `kubeconfig`, `input` on its stdin; rejects only when it cannot run. */
export function runKubectl(kubeconfig: string, args: readonly string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

/** kubectl with `kubeconfig`, both ways: rejecting on a non-zero exit, or answering the exit code. */
export function kubectlFor(kubeconfig: string): { kubectl: Kubectl; tryKubectl: TryKubectl } {
  const tryKubectl: TryKubectl = (args, input) => runKubectl(kubeconfig, args, input);
  const kubectl: Kubectl = async (args, input) => {
    const result = await tryKubectl(args, input);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited with ${result.code}: ${result.stderr}`);
    return result.stdout;
  };
  return { kubectl, tryKubectl };
}

/** The serviceaccount controller creates a namespace's `default` ServiceAccount shortly after the namespace. */
export async function untilServiceAccount(tryKubectl: TryKubectl, namespace: string, name: string, deadline: number): Promise<void> {
  while ((await tryKubectl(['get', 'serviceaccount', name, '-n', namespace, '-o', 'name'])).code !== 0) {
    if (Date.now() > deadline) throw new Error(`ServiceAccount ${namespace}/${name} did not appear`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Creates the ServiceAccount (and ClusterRoleBinding) if missing, waits for RBAC to grant it, returns a TokenRequest token. */
export async function tokenFor(
  kubectl: Kubectl,
  { namespace, name }: { namespace: string; name: string },
  { clusterRole, durationSeconds = 3600 }: { clusterRole?: string; durationSeconds?: number },
): Promise<string> {
  const manifests: unknown[] = [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace, name } }];
  if (clusterRole) {
    manifests.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${namespace}:${name}:${clusterRole}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects: [{ kind: 'ServiceAccount', namespace, name }],
    });
  }
  await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }));
  if (clusterRole) await untilBound(kubectl, clusterRole, `system:serviceaccount:${namespace}:${name}`, namespace);
  return (await kubectl(['create', 'token', name, '-n', namespace, `--duration=${durationSeconds}s`])).trim();
}

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/**
 * Waits until RBAC's authorizer (which reads its bindings from an informer) grants `user` the
 * first rule of `clusterRole`. An aggregated role (admin, edit, view) has no rules until the
 * clusterrole-aggregation controller fills them in.
 */
async function untilBound(kubectl: Kubectl, clusterRole: string, user: string, namespace: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const role = JSON.parse(await kubectl(['get', 'clusterrole', clusterRole, '-o', 'json'])) as { rules?: PolicyRule[] | null };
    const rule = (role.rules ?? []).find(
      (r) => r.verbs?.length && !r.resourceNames?.length && (r.resources?.length || r.nonResourceURLs?.length),
    );
    if (rule?.verbs) {
      const [resource = '', subresource] = (rule.resources?.[0] ?? '').split('/');
      const group = rule.apiGroups?.[0] ? `.${rule.apiGroups[0]}` : '';
      const what = rule.resources?.length
        ? [`${resource}${group}`, ...(subresource ? [`--subresource=${subresource}`] : [])]
        : [rule.nonResourceURLs?.[0] ?? '/'];
      const answer = await kubectl(['auth', 'can-i', rule.verbs[0] ?? 'get', ...what, `--as=${user}`, '-n', namespace]).catch(() => 'no');
      if (answer.trim() === 'yes') return;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${user} is not granted ClusterRole ${clusterRole} (an aggregated role needs the clusterrole-aggregation controller)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
