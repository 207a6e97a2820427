/**
 * Errors the domain raises on bad input. Each carries a stable code; the HTTP edge maps
 * codes to a Kubernetes `Status` (reason and HTTP code) in one place. A broken invariant is
 * not a DomainError: it is an `InvariantViolation` (see assert.ts) and crashes loudly.
 */
export type DomainErrorCode =
  | 'QuantityInvalid'
  | 'ObjectInvalid'
  /** Not a readable object at all: wrong JSON types, unknown fields, wrong kind (400, not 422). */
  | 'ObjectMalformed'
  | 'EventInvalid';

/** One field-level problem, shaped like Kubernetes' `field.Error` (`StatusCause`). */
export interface FieldCause {
  /** `field.ErrorType` spelled as Kubernetes spells the cause reason, e.g. `FieldValueInvalid`. */
  readonly reason: string;
  /** The field path, e.g. `spec.hard[requests.cpu]`. */
  readonly field: string;
  readonly message: string;
}

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly causes: readonly FieldCause[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
