import { EVENT_SCHEMA_VERSION } from '@quota/domain';
import { describe, expect, it } from 'vitest';
import { LedgerError } from './ledger-error.js';
import { decodeEvent, type FoldRow } from './rows.js';

const row = (over: Partial<FoldRow>): FoldRow => ({
  version: '7',
  type: 'Committed',
  schema_version: 1,
  data: { reservationId: 'r1' },
  at_ms: 1_700_000_000_123.6,
  ...over,
});

describe('decodeEvent', () => {
  it('decodes a row of a known type and schema version into the domain event', () => {
    expect(decodeEvent(row({}))).toEqual({ type: 'Committed', data: { reservationId: 'r1' }, version: 7, at: 1_700_000_000_123 });
  });

  it('refuses an event type this build does not know, naming it, with a coded error', () => {
    const decode = () => decodeEvent(row({ type: 'QuotaBorrowed' }));
    expect(decode).toThrow(LedgerError);
    expect(decode).toThrow(
      'the ledger holds an event of type "QuotaBorrowed" (version 7) that this build does not know; upgrade this replica',
    );
    try {
      decode();
    } catch (error) {
      expect((error as LedgerError).code).toBe('Undecodable');
    }
  });

  it('refuses a schema version newer than this build reads (a newer replica wrote it), never guessing at its shape', () => {
    const future = EVENT_SCHEMA_VERSION + 1;
    expect(() => decodeEvent(row({ schema_version: future }))).toThrow(
      `the ledger holds a Committed event (version 7) of schema version ${future}; this build reads versions 1 to ${EVENT_SCHEMA_VERSION}; upgrade this replica`,
    );
    expect(() => decodeEvent(row({ schema_version: 0 }))).toThrow(LedgerError);
  });

  it('refuses an event whose data is not an object', () => {
    expect(() => decodeEvent(row({ data: null }))).toThrow('has no data object');
    expect(() => decodeEvent(row({ data: [1] }))).toThrow('has no data object');
  });
});
