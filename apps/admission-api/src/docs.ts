import type { INestApplication } from '@nestjs/common';
import {
  DocumentBuilder,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type ResponseObject,
  type SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';
import { handlersOf } from './openapi/handlers.js';
import { ROUTE_DOCS, type RouteDoc } from './openapi/routes.js';
import { SCHEMAS, schemaRef } from './openapi/schemas.js';
import { describeValidatedDtos } from './openapi/validation-schema.js';

const TAGS: ReadonlyArray<[RegExp, string]> = [
  [/^\/v1\/(clusterresourcequotas|namespaces\/\{namespace\}\/(hierarchicalresourcequotas|appliedclusterresourcequotas))/, 'shared quotas'],
  [/^\/v1\/namespaces\/\{(name|namespace)\}(\/history)?$/, 'namespaces'],
  [/^\/v1\/namespaces$/, 'audit'],
  [/^\/v1\/admission\//, 'admission webhook'],
  [/\/reservations(\/|$)/, 'reservations'],
  [/\/whatif$/, 'reservations'],
  [/^\/v1\/whoami$/, 'authentication'],
  [/\/resourcequotas/, 'resource quotas'],
  [/\/limitranges/, 'limit ranges'],
  [/^\/v1\/namespaces\/\{namespace\}\/(usage|events|decisions)/, 'audit'],
  [/^\/v1\/projections/, 'projections'],
  [/^\/(healthz|readyz|metrics)$/, 'operations'],
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** What each shared error answer means; a route's own meaning (routes.ts) takes precedence. */
const SHARED_ERRORS: Readonly<Record<number, string>> = {
  400: 'A malformed path parameter, query parameter or body; details.causes names the field.',
  401: 'No valid credentials (a bearer token from TOKENS_FILE, or a client certificate).',
  403: "The caller's roles or namespaces do not allow this (x-quota-ledger-roles).",
  413: 'The body is larger than the server accepts (BODY_LIMIT_BYTES; 512 KiB for an object definition).',
  415: 'The body is not UTF-8 JSON.',
  429: 'Too many requests from this client (RATE_LIMIT_PER_SECOND), or too many bodies being read at once; retry after details.retryAfterSeconds.',
};
const SERVER_ERROR =
  'The ledger could not answer (503: unreachable or too busy, retry after details.retryAfterSeconds), or an internal error (500, named by its request id).';

const statusAnswer = (description: string): ResponseObject => ({
  description,
  content: { 'application/json': { schema: schemaRef('Status') } },
});

/** The route table's entry applied to the operation @nestjs/swagger built from the handler. */
function describeOperation(operation: OperationObject, route: RouteDoc): void {
  operation.summary = route.summary;
  const parameters = (operation.parameters ?? []) as ParameterObject[];
  for (const parameter of parameters) {
    const schema =
      route.parameters?.[parameter.name]?.schema ?? (parameter.in === 'path' ? (parameter.schema as SchemaObject | undefined) : undefined);
    if (schema) parameter.schema = schema;
    const description = route.parameters?.[parameter.name]?.description ?? schema?.description;
    if (description) parameter.description = description;
  }
  for (const [name, extra] of Object.entries(route.parameters ?? {})) {
    if (!parameters.some((p) => p.name === name))
      parameters.push({
        name,
        in: extra.in,
        required: extra.in === 'path',
        schema: extra.schema,
        ...(extra.description ? { description: extra.description } : {}),
      });
  }
  operation.parameters = parameters;
  if (route.body)
    operation.requestBody = {
      required: true,
      description: route.body.description,
      content: { 'application/json': { schema: route.body.schema } },
    };

  const responses = operation.responses as Record<string, ResponseObject>;
  for (const [status, answer] of Object.entries(route.answers)) {
    const before = responses[status];
    const headers = { ...before?.headers, ...answer.headers };
    responses[status] = {
      description: answer.description,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: { [answer.mediaType ?? 'application/json']: { schema: answer.schema } },
    };
  }
  // Every route: a bad path or query (JsonHygiene, the pipes); with roles, who may call it and
  // the rate limit; with a body, the body's limits.
  const errors = new Set([400, ...Object.keys(route.errors).map(Number)]);
  if ('x-quota-ledger-roles' in operation) [401, 403, 429].forEach((code) => errors.add(code));
  if (operation.requestBody) [413, 415, 429].forEach((code) => errors.add(code));
  for (const code of [...errors].sort()) responses[String(code)] = statusAnswer(route.errors[code] ?? SHARED_ERRORS[code] ?? '');
  responses['5XX'] = statusAnswer(SERVER_ERROR);
}

/**
 * The OpenAPI document, built from the controllers' routes and their `@Allow` roles
 * (`x-quota-ledger-roles`), with request bodies and query parameters of DTOs derived from their
 * validation, and every answer's schema from the route table (openapi/routes.ts), so it cannot
 * drift from the code unnoticed (test/e2e/openapi.test.ts validates real answers against it);
 * api.md is the prose around it.
 */
export function openApiDocument(app: INestApplication, version: string): OpenAPIObject {
  const handlers = handlersOf(app);
  const dtos = describeValidatedDtos(handlers);
  const config = new DocumentBuilder()
    .setTitle('quota-ledger')
    .setDescription(
      'Kubernetes ResourceQuota and LimitRanger admission on an append-only ledger. Errors are Kubernetes Status objects. ' +
        'Authenticate with `Authorization: Bearer TOKEN`; each operation lists the roles that may call it in x-quota-ledger-roles.',
    )
    .setVersion(version)
    .addBearerAuth()
    .build();
  const document = SwaggerModule.createDocument(app, config);
  const components = (document.components ??= {});
  components.schemas = { ...components.schemas, ...SCHEMAS };
  for (const name of dtos) {
    const schema = components.schemas[name];
    if (schema && !('$ref' in schema)) schema.additionalProperties = false;
  }
  for (const [path, item] of Object.entries(document.paths)) {
    const tag = TAGS.find(([pattern]) => pattern.test(path))?.[1];
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (tag) operation.tags = [tag];
      // An operation missing from the route table keeps what @nestjs/swagger found; the e2e test names it.
      const route = operation.operationId ? ROUTE_DOCS.get(operation.operationId) : undefined;
      if (route) describeOperation(operation, route);
    }
  }
  return document;
}

/** Serves the UI at /docs and the document at /docs/openapi.json. */
export function serveDocs(app: INestApplication, version: string): void {
  SwaggerModule.setup('docs', app, openApiDocument(app, version), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
  });
}
