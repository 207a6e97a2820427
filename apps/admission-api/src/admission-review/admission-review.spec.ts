import { describe, expect, it } from 'vitest';
import { allowResponse, denyResponse, parseAdmissionReview, ReviewMalformed } from './admission-review.js';

const review = (request: Record<string, unknown>) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
const base = { uid: 'u-1', operation: 'CREATE', resource: { group: '', version: 'v1', resource: 'pods' }, namespace: 'ns' };

describe('parseAdmissionReview', () => {
  it('reads what the decision needs and tolerates the fields it does not read', () => {
    const parsed = parseAdmissionReview(
      review({ ...base, requestKind: { group: '', version: 'v1', kind: 'Pod' }, options: { kind: 'CreateOptions' }, userInfo: { username: 'alice', groups: ['dev'] }, dryRun: true, object: { metadata: { name: 'p' } } }),
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

  it('reads a DELETE whose object is null', () => {
    expect(parseAdmissionReview(review({ ...base, operation: 'DELETE', object: null, oldObject: { metadata: { name: 'p' } } }))).toMatchObject({ operation: 'DELETE', oldObject: { metadata: { name: 'p' } } });
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
    ['an array body', [], 'body'],
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

  it('answers a denial with the API server Status', () => {
    expect(denyResponse('u-3', 403, 'pods "p" is forbidden: exceeded quota').response).toEqual({
      uid: 'u-3',
      allowed: false,
      status: { metadata: {}, status: 'Failure', code: 403, reason: 'Forbidden', message: 'pods "p" is forbidden: exceeded quota' },
    });
  });
});
