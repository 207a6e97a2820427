import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

const TAGS: ReadonlyArray<[RegExp, string]> = [
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

/**
 * The OpenAPI document, built from the controllers' routes and their `@Allow` roles
 * (`x-quota-ledger-roles`), so it cannot drift from the code; api.md is the prose around it.
 */
export function openApiDocument(app: INestApplication, version: string): OpenAPIObject {
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
  for (const [path, item] of Object.entries(document.paths)) {
    const tag = TAGS.find(([pattern]) => pattern.test(path))?.[1];
    for (const operation of Object.values(item)) {
      if (tag && typeof operation === 'object' && operation !== null && 'responses' in operation) (operation as { tags?: string[] }).tags = [tag];
    }
  }
  return document;
}

/** Serves the UI at /docs and the document at /docs/openapi.json. */
export function serveDocs(app: INestApplication, version: string): void {
  SwaggerModule.setup('docs', app, openApiDocument(app, version), { jsonDocumentUrl: 'docs/openapi.json', yamlDocumentUrl: 'docs/openapi.yaml' });
}
