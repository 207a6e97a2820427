import { describe, expect, it } from 'vitest';
import { conflictCause, VersionConflict } from './postgres-errors.js';

const unique = (constraint: string) => ({ code: '23505', constraint });

describe('conflictCause', () => {
  it.each([
    ['a stream version taken twice within a month', unique('ledger_events_stream_version_p202611'), 'unique'],
    ['a stream version taken twice in DEFAULT', unique('ledger_events_stream_version_default'), 'unique'],
    ['a stream version on the table before partitioning', unique('ledger_events_stream_version'), 'unique'],
    ['a first head written twice', unique('namespace_heads_pkey'), 'unique'],
    ['the same request key answered twice', unique('admission_decisions_request_key'), 'unique'],
    ['a serialization failure', { code: '40001' }, 'serialization'],
    ['a deadlock', { code: '40P01' }, 'serialization'],
    ['a moved head', new VersionConflict('team-a', 3), 'version'],
  ])('reads %s as a lost race', (_, error, cause) => {
    expect(conflictCause(error)).toBe(cause);
  });

  it('does not retry a unique violation of a key no race explains', () => {
    expect(conflictCause(unique('ledger_events_pkey'))).toBeUndefined();
    expect(conflictCause(unique('something_else'))).toBeUndefined();
  });
});
