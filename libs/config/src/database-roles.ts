import { ConfigError } from './config-error.js';

/** A role name the grants can use unquoted: lower case, as PostgreSQL folds an unquoted name. */
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** DATABASE_RUNTIME_ROLE: the apps' own role (libs/ledger runtime-role.ts), or undefined when unset. */
export function runtimeRole(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const raw = env['DATABASE_RUNTIME_ROLE'];
  if (raw === undefined || raw === '') return undefined;
  if (!ROLE_NAME.test(raw))
    throw new ConfigError('DATABASE_RUNTIME_ROLE', `must be a role name of lower-case letters, digits and '_' (at most 63), got "${raw}"`);
  return raw;
}
