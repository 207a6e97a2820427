import { describe, expect, it } from 'vitest';
import { allowResponse, denyResponse, parseAdmissionReview, ReviewMalformed } from './admission-review.js';

const review = (request: Record<string, unknown>) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
const base = { uid: 'u-1', operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'pods' }, namespace: 'ns' };

describe('parseAdmissionReview', () => {
  it('reads what the decision needs and tolerates the fields it does not read', () => {
    const parsed = parseAdmissionReview(
      review({
        ...base,
        requestKind: { group: '', version: 'v1', kind: 'Pod' },
        options: { kind: 'CreateOptions' },
        userInfo: { username: 'alice', groups: ['dev'] },
        dryRun: true,
        object: { metadata: { name: 'p' } },
      }),
    );
    expect(parsed).toEqual({
      uid: 'u-1',
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'ns',
      operation: 'CREATE',
      username: 'alice',
      object: { metadata: { name: 'p' } },
      dryRun: true,
    });
  });

  it('words a missing field as the API server does', () => {
    expect(() => parseAdmissionReview(review({ ...base, uid: undefined }))).toThrow('request.uid: Required value');
  });

  it('reads a Scale subresource UPDATE with its name and the kind it was sent as', () => {
    const parsed = parseAdmissionReview(
      review({
        ...base,
        operation: 'UPDATE',
        name: 'web',
        kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
        resource: { group: 'apps', version: 'v1', resource: 'deployments' },
        subResource: 'scale',
        requestSubResource: 'scale',
        object: { kind: 'Scale', spec: { replicas: 3 } },
      }),
    );
    expect(parsed).toMatchObject({
      name: 'web',
      subResource: 'scale',
      kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      resource: { group: 'apps', resource: 'deployments' },
    });
  });

  it('reads a cluster-scoped request (empty namespace) as having no namespace, and dryRun absent as false', () => {
    const parsed = parseAdmissionReview(review({ ...base, namespace: '', resource: { group: '', version: 'v1', resource: 'namespaces' } }));
    expect(parsed.namespace).toBeUndefined();
    expect(parsed.dryRun).toBe(false);
  });

  it('reads a DELETE whose object is null', () => {
    expect(
      parseAdmissionReview(review({ ...base, operation: 'DELETE', object: null, oldObject: { metadata: { name: 'p' } } })),
    ).toMatchObject({ operation: 'DELETE', oldObject: { metadata: { name: 'p' } } });
  });

  it.each([
    ['a v1beta1 review', { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: base }, 'apiVersion'],
    ['another kind', { apiVersion: 'admission.k8s.io/v1', kind: 'Pod', request: base }, 'kind'],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'request'],
    ['no uid', review({ ...base, uid: undefined }), 'request.uid'],
    ['an empty uid', review({ ...base, uid: '' }), 'request.uid'],
    ['a numeric uid', review({ ...base, uid: 7 }), 'request.uid'],
    ['an unknown operation', review({ ...base, operation: 'PATCH' }), 'request.operation'],
    ['no resource', review({ ...base, resource: undefined }), 'request.resource'],
    ['a string object', review({ ...base, object: 'pod' }), 'request.object'],
    ['a string dryRun', review({ ...base, dryRun: 'true' }), 'request.dryRun'],
    ['a uid over 128 characters', review({ ...base, uid: 'x'.repeat(129) }), 'request.uid'],
    ['no operation', review({ ...base, operation: undefined }), 'request.operation'],
    ['a lower-case operation', review({ ...base, operation: 'create' }), 'request.operation'],
    ['a resource without its plural', review({ ...base, resource: { group: '', version: 'v1' } }), 'request.resource.resource'],
    ['a numeric resource group', review({ ...base, resource: { group: 1, version: 'v1', resource: 'pods' } }), 'request.resource.group'],
    ['a string resource', review({ ...base, resource: 'pods' }), 'request.resource'],
    ['a numeric namespace', review({ ...base, namespace: 3 }), 'request.namespace'],
    ['a numeric name', review({ ...base, name: 3 }), 'request.name'],
    ['a boolean subResource', review({ ...base, subResource: true }), 'request.subResource'],
    ['an array oldObject', review({ ...base, oldObject: [] }), 'request.oldObject'],
    ['an object whose metadata is a string', review({ ...base, object: { metadata: 'p' } }), 'request.object.metadata'],
    ['a string userInfo', review({ ...base, userInfo: 'alice' }), 'request.userInfo'],
    ['a numeric username', review({ ...base, userInfo: { username: 42 } }), 'request.userInfo.username'],
    ['a string kind', review({ ...base, kind: 'Pod' }), 'request.kind'],
    ['a string request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: 'r' }, 'request'],
    ['an array body', [], 'body'],
    ['a null body', null, 'body'],
  ])('refuses %s, naming %s', (_case, body, field) => {
    expect(() => parseAdmissionReview(body)).toThrow(ReviewMalformed);
    try {
      parseAdmissionReview(body);
    } catch (error) {
      expect((error as ReviewMalformed).field).toBe(field);
    }
  });
});

describe('AdmissionReview responses', () => {
  it('echoes the uid and base64-encodes a non-empty JSONPatch', () => {
    const patch = [{ op: 'add', path: '/metadata/annotations', value: { a: 'b' } }];
    const response = allowResponse('u-1', patch);
    expect(response.response).toMatchObject({ uid: 'u-1', allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(response.response.patch ?? '', 'base64').toString())).toEqual(patch);
    expect(allowResponse('u-2', []).response).toEqual({ uid: 'u-2', allowed: true });
  });

  it.each([
    [403, 'Forbidden', 'pods "p" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2'],
    [500, 'InternalError', 'insufficient quota to consume: requests.cpu'],
  ] as const)('answers a %i denial with HTTP 200 content: the API server Status, reason %s', (code, reason, message) => {
    expect(denyResponse('u-3', code, message)).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-3', allowed: false, status: { metadata: {}, status: 'Failure', code, reason, message } },
    });
  });
});
