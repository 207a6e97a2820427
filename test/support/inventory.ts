import { expect } from 'vitest';
import { InventoryError } from '@quota/inventory';

/** The InventoryError a listing rejects with; fails the test if it succeeds or rejects otherwise. */
export async function inventoryFailure(listing: Promise<unknown>): Promise<InventoryError> {
  const error = await listing.then(
    () => new Error('the listing succeeded'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InventoryError);
  return error as InventoryError;
}
