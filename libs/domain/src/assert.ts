/**
 * A broken invariant is a bug, not bad input: it throws an `InvariantViolation`, which the
 * edge never maps to a 4xx.
 */
export class InvariantViolation extends Error {
  constructor(message: string) {
    super(`invariant violated: ${message}`);
    this.name = 'InvariantViolation';
  }
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantViolation(message);
}

/** Ends an exhaustive switch: compiling means every case of the union was handled. */
export function assertNever(value: never, what = 'value'): never {
  throw new InvariantViolation(`unexpected ${what}: ${JSON.stringify(value)}`);
}
