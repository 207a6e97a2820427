/** An AdmissionReview response without its audit annotations and warnings (checked where they are the point). */
export const withoutReviewExtras = ({ auditAnnotations: _a, warnings: _w, ...rest }: Record<string, unknown>): Record<string, unknown> =>
  rest;

/** An AdmissionReview as kube-apiserver sends it: `request` holds what the test is about (uid, kind, resource, name, namespace, operation, objects). */
export const admissionReview = (request: Record<string, unknown>) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { userInfo: { username: 'kubernetes-admin' }, dryRun: false, oldObject: null, ...request },
});
