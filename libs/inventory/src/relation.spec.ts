import { describe, expect, it } from 'vitest';
import { quoteRelation } from './relation.js';

describe('the postgres relation name (INVENTORY_RELATION)', () => {
  it.each([
    ['objects', '"objects"'],
    ['platform.objects', '"platform"."objects"'],
    ['Platform.Live_Objects', '"platform"."live_objects"'],
    ['_private.t$1', '"_private"."t$1"'],
    ['a'.repeat(63), `"${'a'.repeat(63)}"`],
  ])('quotes %s as %s (folded to lower case, as PostgreSQL reads an unquoted name)', (relation, quoted) => {
    expect(quoteRelation(relation)).toBe(quoted);
  });

  it.each([
    ['an empty name', ''],
    ['SQL after the name', 'objects; DROP TABLE ledger_events'],
    ['a comment', 'objects--'],
    ['three parts', 'db.platform.objects'],
    ['an empty part', 'platform.'],
    ['a leading dot', '.objects'],
    ['a quoted identifier', '"Objects"'],
    ['a leading digit', '1objects'],
    ['a space', 'platform objects'],
    ['a hyphen', 'platform-objects'],
    ['a name longer than 63 characters', 'a'.repeat(64)],
    ['a non-ASCII letter', 'objetos_año'],
    ['a parenthesis (a function call)', 'pg_sleep(10)'],
  ])('refuses %s', (_case, relation) => {
    expect(() => quoteRelation(relation)).toThrow(/must be a table or view name, optionally schema-qualified/);
  });
});
