/**
 * What a variable's definition says (kind, group, default, bounds, meaning) and the helpers the
 * tables of VARIABLES (variables.ts) are written with.
 */

/** How a variable's text is read. */
export type VariableKind = 'integer' | 'url' | 'oneOf' | 'flag' | 'text' | 'file' | 'list';

/** The reference's sections, in the order it prints them. */
export const VARIABLE_GROUPS = {
  server: 'HTTP server',
  database: 'Database and queue',
  security: 'Security',
  admission: 'Admission',
  projection: 'Projection worker',
  reconciler: 'Reconciler and inventory',
  lifecycle: 'Logs, metrics and shutdown',
  development: 'Development start (npm start)',
  quotactl: 'quotactl',
} as const;

export type VariableGroup = keyof typeof VARIABLE_GROUPS;

export interface VariableDefinition {
  readonly group: VariableGroup;
  readonly kind: VariableKind;
  /** The value when the variable is unset or empty; undefined: none (the feature is off). */
  readonly default?: number | string;
  /** The default in words, where it depends on other variables or on how the process is started. */
  readonly defaultText?: string;
  /** Inclusive bounds of an integer. */
  readonly min?: number;
  readonly max?: number;
  /** The values a `oneOf` accepts. */
  readonly values?: readonly string[];
  /** The URL schemes a `url` accepts. */
  readonly protocols?: readonly string[];
  /** What it does, for the reference (Markdown). */
  readonly meaning: string;
  /** The documentation page that says more (a path under docs/, with an optional #anchor). */
  readonly see?: string;
}

export interface IntegerDefinition extends VariableDefinition {
  readonly kind: 'integer';
  readonly default: number;
  readonly min: number;
  readonly max: number;
}

export const integer = (
  group: VariableGroup,
  value: number,
  min: number,
  max: number,
  meaning: string,
  more: Pick<VariableDefinition, 'see' | 'defaultText'> = {},
): IntegerDefinition => ({
  group,
  kind: 'integer',
  default: value,
  min,
  max,
  meaning,
  ...more,
});
/** The schemes of a PostgreSQL URL. */
export const postgresUrl = ['postgres:', 'postgresql:'];
