import { describe, expect, it } from 'vitest';
import { parsePasted, PASTE_MAX_CHARS } from './what-if.js';

const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-a' }, spec: { containers: [{ name: 'a', image: 'x' }] }, status: { phase: 'Running' } };

describe('parsePasted', () => {
  it('asks about a pasted object as a CREATE of it, without its status', () => {
    const { status: _status, ...object } = pod;
    expect(parsePasted(JSON.stringify(pod))).toEqual({ ok: true, body: { kind: 'Pod', object }, namespace: 'team-a', what: 'Pod web' });
  });

  it('takes the object, operation and old object of an AdmissionReview', () => {
    const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', operation: 'UPDATE', namespace: 'team-b', object: pod, oldObject: pod } };
    expect(parsePasted(JSON.stringify(review))).toEqual({ ok: true, body: { kind: 'Pod', object: pod, operation: 'UPDATE', oldObject: pod }, namespace: 'team-b', what: 'UPDATE of Pod web' });
  });

  it('passes a REST reservation body on, without the fields that only matter when writing', () => {
    const body = { kind: 'Widget', resource: 'widgets.example.com', resources: { 'count/widgets.example.com': '1' }, requestId: 'r1', dryRun: false, ttlSeconds: 60 };
    expect(parsePasted(JSON.stringify(body))).toEqual({ ok: true, body: { kind: 'Widget', resource: 'widgets.example.com', resources: { 'count/widgets.example.com': '1' } }, what: 'Widget' });
  });

  it.each([
    ['', 'Paste a Pod'],
    ['   ', 'Paste a Pod'],
    ['apiVersion: v1\nkind: Pod\n', 'looks like YAML'],
    ['{"kind":', 'Not JSON'],
    ['[1,2]', 'Expected a JSON object'],
    ['"pod"', 'Expected a JSON object'],
    ['{"metadata":{}}', 'expected apiVersion and kind'],
    ['{"kind":"AdmissionReview","request":{}}', 'no request.object'],
    ['{"kind":"AdmissionReview","request":{"operation":"DELETE","object":{"kind":"Pod"}}}', 'Only a CREATE or UPDATE'],
    ['{"object":{"kind":"Pod"}}', 'needs a kind'],
  ])('refuses %j, saying what to paste instead', (text, problem) => {
    const result = parsePasted(text);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.problem).toContain(problem);
  });

  it('refuses a paste larger than a what-if takes, before parsing it', () => {
    const result = parsePasted(' '.repeat(PASTE_MAX_CHARS) + '{}');
    expect(result.ok ? '' : result.problem).toContain('at most');
  });
});
