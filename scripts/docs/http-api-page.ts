import { cell, code, generatedHeader, prose, table } from './markdown.js';

/** The parts of an OpenAPI 3 document the page reads. */
interface Schema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly format?: string;
  readonly description?: string;
  readonly enum?: readonly unknown[];
  readonly items?: Schema;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly oneOf?: readonly Schema[];
  readonly anyOf?: readonly Schema[];
  readonly allOf?: readonly Schema[];
  readonly additionalProperties?: boolean | Schema;
}
interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly schema?: Schema;
}
interface Answer {
  readonly description?: string;
  readonly content?: Readonly<Record<string, { readonly schema?: Schema }>>;
  readonly headers?: Readonly<Record<string, { readonly description?: string }>>;
}
interface Operation {
  readonly summary?: string;
  readonly tags?: readonly string[];
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly description?: string; readonly content?: Readonly<Record<string, { readonly schema?: Schema }>> };
  readonly responses?: Readonly<Record<string, Answer>>;
  readonly 'x-quota-ledger-roles'?: readonly string[];
}
export interface OpenApi {
  readonly info: { readonly title: string; readonly version: string; readonly description?: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
  readonly components?: { readonly schemas?: Readonly<Record<string, Schema>> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

const anchorOf = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** A schema in a few words: a link to a named one, or its type. */
export function schemaText(schema: Schema | undefined): string {
  if (!schema) return '';
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop() ?? '';
    return `[${name}](#${anchorOf(`schema ${name}`)})`;
  }
  const choices = schema.oneOf ?? schema.anyOf;
  if (choices) return choices.map(schemaText).join(' or ');
  if (schema.allOf) return schema.allOf.map(schemaText).join(' and ');
  if (schema.enum) return schema.enum.map((v) => code(String(v))).join(', ');
  const type = typeof schema.type === 'string' ? schema.type : (schema.type?.join(' or ') ?? 'any');
  if (type === 'array') return `array of ${schemaText(schema.items)}`;
  return schema.format ? `${type} (${schema.format})` : type;
}

function operationSection(method: string, path: string, operation: Operation): string {
  const roles = operation['x-quota-ledger-roles'];
  const parts = [
    `### ${method.toUpperCase()} ${code(path)}`,
    '',
    prose(operation.summary ?? ''),
    '',
    `Roles: ${roles ? roles.map(code).join(', ') : 'open (no credential needed)'}.`,
  ];
  const parameters = operation.parameters ?? [];
  if (parameters.length > 0) {
    const rows = parameters.map((p) => [
      code(p.name),
      p.in,
      p.required ? 'yes' : 'no',
      cell(schemaText(p.schema)),
      cell(p.description ?? ''),
    ]);
    parts.push('', table(['parameter', 'in', 'required', 'schema', 'description'], rows));
  }
  const body = operation.requestBody;
  if (body) {
    const [media = '', content] = Object.entries(body.content ?? {})[0] ?? [];
    parts.push('', `Body (${code(media)}): ${cell(schemaText(content?.schema))}${body.description ? ` — ${cell(body.description)}` : ''}`);
  }
  const answers = Object.entries(operation.responses ?? {}).map(([status, answer]) => {
    const [media = '', content] = Object.entries(answer.content ?? {})[0] ?? [];
    return [status, media ? `${code(media)} ${cell(schemaText(content?.schema))}` : '', cell(answer.description ?? '')];
  });
  parts.push('', table(['status', 'body', 'meaning'], answers));
  // Answer headers (the Warning of a reservation), each once with the statuses that carry it.
  const headers = new Map<string, { statuses: string[]; description: string }>();
  for (const [status, answer] of Object.entries(operation.responses ?? {})) {
    for (const [name, header] of Object.entries(answer.headers ?? {})) {
      const entry = headers.get(name) ?? { statuses: [], description: header.description ?? '' };
      entry.statuses.push(status);
      headers.set(name, entry);
    }
  }
  for (const [name, { statuses, description }] of headers)
    parts.push('', `Header ${code(name)} (${statuses.join(', ')}): ${prose(description)}`);
  return parts.join('\n');
}

function schemaSection(name: string, schema: Schema): string {
  const parts = [`### Schema ${name}`];
  if (schema.description) parts.push('', prose(schema.description));
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length > 0) {
    const required = new Set(schema.required ?? []);
    parts.push(
      '',
      table(
        ['field', 'schema', 'required', 'description'],
        properties.map(([field, s]) => [code(field), cell(schemaText(s)), required.has(field) ? 'yes' : 'no', cell(s.description ?? '')]),
      ),
    );
  } else {
    parts.push('', `${cell(schemaText(schema))}.`);
  }
  return parts.join('\n');
}

/** docs/reference/http-api.md from the OpenAPI document the API serves at /docs/openapi.json. */
export function httpApiPage(document: OpenApi): string {
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), operationSection(method, path, operation)]);
    }
  }
  const parts = [
    generatedHeader(
      'HTTP API reference',
      'the OpenAPI document the API serves at `/docs/openapi.json` (built from the controllers and apps/admission-api/src/openapi)',
    ),
    `${prose(document.info.description ?? '')} Version ${document.info.version}.`,
    '',
    'The contract in prose, with the rules every route shares, is [the HTTP API page](../api.md); a running API serves this same document',
    'at `/docs` (an interactive UI), `/docs/openapi.json` and `/docs/openapi.yaml`.',
  ];
  for (const [tag, sections] of byTag) parts.push('', `## ${tag[0]?.toUpperCase()}${tag.slice(1)}`, '', sections.join('\n\n'));
  const schemas = Object.entries(document.components?.schemas ?? {}).sort(([a], [b]) => a.localeCompare(b));
  parts.push('', '## Schemas', '', schemas.map(([name, schema]) => schemaSection(name, schema)).join('\n\n'));
  return `${parts.join('\n')}\n`;
}
