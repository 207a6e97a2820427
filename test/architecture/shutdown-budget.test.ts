import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '@quota/config';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

/**
 * The API Deployment's shutdown budget against the code: a preStop sleep run by
 * node (the one program the image is sure to have), then the API's drain and close, all within
 * terminationGracePeriodSeconds, or the kubelet's SIGKILL cuts requests and group commits short.
 * The rule runs on the real manifest (no problems) and on broken copies (the problem is named).
 */
const KUBERNETES = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url));
const API_DEPLOYMENT = 'quota-ledger-api';

type Json = Record<string, unknown>;
const asObject = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFilesUnder(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

/** The API Deployments of deploy/kubernetes that define their containers (overlays' partial patches left out). */
function apiDeployments(): Json[] {
  return yamlFilesUnder(KUBERNETES).flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8'))
      .map((document) => asObject(document.toJS()))
      .filter((doc) => doc['kind'] === 'Deployment' && asObject(doc['metadata'])['name'] === API_DEPLOYMENT)
      .filter((doc) =>
        asList(asObject(asObject(asObject(doc['spec'])['template'])['spec'])['containers']).some(
          (c) => asObject(c)['command'] !== undefined,
        ),
      ),
  );
}

const PRESTOP_SLEEP = /^setTimeout\(\(\) => \{\}, ([0-9]+)\)$/;

function shutdownBudgetProblems(deployment: Json): string[] {
  const pod = asObject(asObject(asObject(deployment['spec'])['template'])['spec']);
  const container = asObject(
    asList(pod['containers']).find((c) =>
      asList(asObject(c)['command']).some((part) => String(part).includes('admission-api/src/main.js')),
    ),
  );
  if (Object.keys(container).length === 0) return ['no container runs the admission API'];
  const env = Object.fromEntries(
    asList(container['env']).map((e) => [
      String(asObject(e)['name']),
      asObject(e)['value'] === undefined ? undefined : String(asObject(e)['value']),
    ]),
  );
  // The values the API will run with: the manifest's variables over the code's defaults.
  const config = loadConfig(Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('SHUTDOWN_'))));
  const problems: string[] = [];
  const command = asList(asObject(asObject(asObject(container['lifecycle'])['preStop'])['exec'])['command']).map(String);
  const sleep = command[0] === 'node' && command[1] === '-e' && command.length === 3 ? PRESTOP_SLEEP.exec(command[2] ?? '') : null;
  if (!sleep)
    problems.push(
      `the API container's preStop is not a sleep run by node (["node", "-e", "setTimeout(() => {}, MS)"]): got ${JSON.stringify(command)}`,
    );
  const preStopMs = sleep ? Number(sleep[1]) : 0;
  if (sleep && (preStopMs < 1000 || preStopMs > 30_000)) problems.push(`the preStop sleep of ${preStopMs} ms is not between 1 and 30 s`);
  if (config.shutdownDrainSeconds === 0)
    problems.push('SHUTDOWN_DRAIN_SECONDS is 0: /readyz would fail and the server close at the same moment');
  const graceSeconds = Number(pod['terminationGracePeriodSeconds'] ?? 30);
  const neededMs = preStopMs + config.shutdownDrainSeconds * 1000 + config.shutdownTimeoutMs;
  if (graceSeconds * 1000 <= neededMs) {
    problems.push(
      `terminationGracePeriodSeconds ${graceSeconds} is not more than preStop ${preStopMs} ms + SHUTDOWN_DRAIN_SECONDS ${config.shutdownDrainSeconds} s + SHUTDOWN_TIMEOUT_MS ${config.shutdownTimeoutMs} ms`,
    );
  }
  return problems;
}

describe('the API Deployment shuts down within its grace period', () => {
  const deployments = apiDeployments();

  it('has a preStop sleep, a drain and a grace period longer than both and the close', () => {
    expect(deployments.length).toBeGreaterThan(0);
    for (const deployment of deployments) expect(shutdownBudgetProblems(deployment)).toEqual([]);
  });

  const broken = (edit: (pod: Json, container: Json) => void): Json => {
    const copy = structuredClone(deployments[0]) as Json;
    const pod = asObject(asObject(asObject(copy['spec'])['template'])['spec']);
    edit(pod, asObject(asList(pod['containers'])[0]));
    return copy;
  };

  it.each<[string, (pod: Json, container: Json) => void, RegExp]>([
    [
      'the grace period Kubernetes defaults to',
      (pod) => delete pod['terminationGracePeriodSeconds'],
      /terminationGracePeriodSeconds 30 is not more than/,
    ],
    [
      'a drain that outlasts the grace period',
      (_pod, container) => (container['env'] = [...asList(container['env']), { name: 'SHUTDOWN_DRAIN_SECONDS', value: '60' }]),
      /SHUTDOWN_DRAIN_SECONDS 60 s/,
    ],
    [
      'no drain',
      (_pod, container) => (container['env'] = [...asList(container['env']), { name: 'SHUTDOWN_DRAIN_SECONDS', value: '0' }]),
      /SHUTDOWN_DRAIN_SECONDS is 0/,
    ],
    ['no preStop', (_pod, container) => delete container['lifecycle'], /preStop is not a sleep run by node/],
    [
      'a preStop that needs a shell',
      (_pod, container) => (container['lifecycle'] = { preStop: { exec: { command: ['sh', '-c', 'sleep 5'] } } }),
      /preStop is not a sleep run by node/,
    ],
  ])('names %s', (_what, edit, problem) => {
    expect(shutdownBudgetProblems(broken(edit)).join('\n')).toMatch(problem);
  });
});
