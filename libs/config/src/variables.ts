/**
 * Every environment variable the processes read, as data: its default, its bounds or allowed
 * values, and what it means. The loaders (config.ts, admission-config.ts, cli-config.ts) take
 * defaults and bounds from here, and `npm run docs:generate` writes the configuration reference
 * (docs/reference/configuration.md) from the same table, so the two cannot drift apart. The table
 * is written in two parts, in the reference's order: server-variables.ts, operation-variables.ts.
 */

import { OPERATION_VARIABLES } from './operation-variables.js';
import { SERVER_VARIABLES } from './server-variables.js';
import type { VariableDefinition, VariableKind } from './variable-definition.js';

export { VARIABLE_GROUPS, type VariableDefinition, type VariableGroup, type VariableKind } from './variable-definition.js';
export { DEFAULT_BODY_LIMIT_BYTES } from './server-variables.js';

export const VARIABLES = { ...SERVER_VARIABLES, ...OPERATION_VARIABLES } as const satisfies Record<string, VariableDefinition>;

export type VariableName = keyof typeof VARIABLES;

/** The names of the variables whose definition has the given kind. */
export type VariableOfKind<K extends VariableKind> = {
  [N in VariableName]: (typeof VARIABLES)[N] extends { readonly kind: K } ? N : never;
}[VariableName];

export function variable(name: VariableName): VariableDefinition {
  return VARIABLES[name];
}
