import { describe, expect, it } from 'vitest';
import { parsePasted, PASTE_MAX_CHARS, type YamlLoader } from './what-if.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'team-a' },
  spec: { containers: [{ name: 'a', image: 'x' }] },
  status: { phase: 'Running' },
};

describe('parsePasted', () => {
  it('asks about a pasted object as a CREATE of it, without its status', async () => {
    const { status: _status, ...object } = pod;
    expect(await parsePasted(JSON.stringify(pod))).toEqual({
      ok: true,
      body: { kind: 'Pod', object },
      namespace: 'team-a',
      what: 'Pod web',
    });
  });

  it('takes the object, operation and old object of an AdmissionReview', async () => {
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'u', operation: 'UPDATE', namespace: 'team-b', object: pod, oldObject: pod },
    };
    expect(await parsePasted(JSON.stringify(review))).toEqual({
      ok: true,
      body: { kind: 'Pod', object: pod, operation: 'UPDATE', oldObject: pod },
      namespace: 'team-b',
      what: 'UPDATE of Pod web',
    });
  });

  it('passes a REST reservation body on, without the fields that only matter when writing', async () => {
    const body = {
      kind: 'Widget',
      resource: 'widgets.example.com',
      resources: { 'count/widgets.example.com': '1' },
      requestId: 'r1',
      dryRun: false,
      ttlSeconds: 60,
    };
    expect(await parsePasted(JSON.stringify(body))).toEqual({
      ok: true,
      body: { kind: 'Widget', resource: 'widgets.example.com', resources: { 'count/widgets.example.com': '1' } },
      what: 'Widget',
    });
  });

  it.each([
    ['', 'Paste a Pod'],
    ['   ', 'Paste a Pod'],
    ['{"kind":', 'Not JSON'],
    ['[1,2]', 'Expected an object'],
    ['"pod"', 'Expected an object'],
    ['just words', 'Expected an object'],
    ['kind: Pod\n  bad: indent\n', 'Not YAML or JSON: Nested mappings are not allowed in compact mappings at line 1, column 7.'],
    ['kind: Pod\n---\nkind: Pod\n', 'one object; this has 2 YAML documents'],
    ['apiVersion: v1\n', 'expected apiVersion and kind'],
    ['{"metadata":{}}', 'expected apiVersion and kind'],
    ['{"kind":"AdmissionReview","request":{}}', 'no request.object'],
    ['{"kind":"AdmissionReview","request":{"operation":"DELETE","object":{"kind":"Pod"}}}', 'Only a CREATE or UPDATE'],
    ['{"object":{"kind":"Pod"}}', 'needs a kind'],
  ])('refuses %j, saying what to paste instead', async (text, problem) => {
    const result = await parsePasted(text);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.problem).toContain(problem);
  });

  it('refuses a paste larger than a what-if takes, before parsing it', async () => {
    const result = await parsePasted(' '.repeat(PASTE_MAX_CHARS) + '{}');
    expect(result.ok ? '' : result.problem).toContain('at most');
  });

  it('reads a Pod as kubectl get pod -o yaml prints it, quantities and all, as the same body as its JSON', async () => {
    const yaml = [
      'apiVersion: v1',
      'kind: Pod',
      'metadata:',
      '  name: web',
      '  namespace: team-a',
      'spec:',
      '  containers:',
      '  - name: a',
      '    image: x',
      '    resources:',
      '      requests: { cpu: 500m, memory: 256Mi }',
      '      limits:',
      '        cpu: 1',
      'status:',
      '  phase: Running',
      '',
    ].join('\n');
    const answer = await parsePasted(yaml);
    expect(answer).toEqual({
      ok: true,
      body: {
        kind: 'Pod',
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web', namespace: 'team-a' },
          spec: { containers: [{ name: 'a', image: 'x', resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: 1 } } }] },
        },
      },
      namespace: 'team-a',
      what: 'Pod web',
    });
  });

  it('loads the YAML reader only for what is not JSON', async () => {
    let loads = 0;
    const counting: YamlLoader = () => {
      loads++;
      return import('yaml');
    };
    await parsePasted(JSON.stringify(pod), counting);
    await parsePasted('{"kind":', counting);
    expect(loads).toBe(0);
    expect((await parsePasted('apiVersion: v1\nkind: Pod\nmetadata: { name: web }\n', counting)).ok).toBe(true);
    expect(loads).toBe(1);
  });

  it('says so when the YAML reader cannot be fetched', async () => {
    const offline: YamlLoader = () => Promise.reject(new Error('Failed to fetch dynamically imported module'));
    const answer = await parsePasted('kind: Pod\n', offline);
    expect(answer.ok ? '' : answer.problem).toContain('Could not load the YAML reader');
  });
});
