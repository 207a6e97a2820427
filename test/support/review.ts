/** An AdmissionReview response without its audit annotations and warnings (checked where they are the point). */
export const withoutReviewExtras = ({ auditAnnotations: _a, warnings: _w, ...rest }: Record<string, unknown>): Record<string, unknown> => rest;
