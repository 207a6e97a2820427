/** An unquoted PostgreSQL identifier; 63 bytes is NAMEDATALEN - 1 (longer names are silently cut). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/**
 * `table` or `schema.table` → a quoted relation for the SQL text. Names are read the way
 * PostgreSQL reads unquoted ones (folded to lower case) and then quoted, so no configured
 * value can reach the SQL as anything but one identifier. Anything else is a configuration
 * error, thrown with the rule it broke.
 */
export function quoteRelation(relation: string): string {
  const parts = relation.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new Error(
      `postgres inventory: relation ${JSON.stringify(relation)} must be a table or view name, optionally schema-qualified: letters, digits, _ and $, starting with a letter or _, at most 63 characters each (e.g. platform.objects)`,
    );
  }
  return parts.map((part) => `"${part.toLowerCase()}"`).join('.');
}
