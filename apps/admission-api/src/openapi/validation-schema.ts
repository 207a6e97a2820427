import type { ApiPropertyOptions } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import { type Handler, parameterTypes } from './handlers.js';

/**
 * The schemas of request DTOs (bodies and query strings), derived from the class-validator
 * decorators that check them, so a limit is written once and the document cannot disagree
 * with what the API refuses. @nestjs/swagger's CLI plugin would do this at compile time; the
 * build here is plain tsc (SWC in tests), so the same hook is filled at run time instead: a
 * class's static `_OPENAPI_METADATA_FACTORY`, which @nestjs/swagger reads when it builds the
 * document, merged under any explicit `@ApiProperty`.
 */
const METADATA_FACTORY = '_OPENAPI_METADATA_FACTORY';

type PropertyOptions = ApiPropertyOptions & Record<string, unknown>;
type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];
type Dto = abstract new (...args: never[]) => unknown;

function validationOf(dto: Dto): ValidationMetadata[] {
  return getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
}

/** The swagger options of one property, from its decorators; an unknown decorator stops the build of the document. */
function propertyOf(dto: Dto, property: string, metadatas: readonly ValidationMetadata[]): PropertyOptions {
  const options: PropertyOptions = { required: true };
  for (const metadata of metadatas) {
    const [first, second] = (metadata.constraints ?? []) as unknown[];
    switch (metadata.name) {
      case 'isOptional':
        options.required = false;
        break;
      case 'isString':
        options.type = 'string';
        break;
      case 'isBoolean':
        options.type = 'boolean';
        break;
      case 'isInt':
        options.type = 'integer';
        break;
      case 'isObject':
        options.type = Object;
        options['additionalProperties'] = true;
        break;
      case 'isLength':
        options.minLength = first as number;
        if (second !== undefined) options.maxLength = second as number;
        break;
      case 'matches': {
        const pattern = first as RegExp;
        if (pattern.flags !== '')
          throw new Error(`${dto.name}.${property}: a pattern with flags (/${pattern.source}/${pattern.flags}) has no OpenAPI spelling`);
        options.pattern = pattern.source;
        options.type ??= 'string';
        break;
      }
      case 'isIn': {
        const values = first as readonly (string | number)[];
        options.enum = [...values];
        options.type ??= typeof values[0] === 'number' ? 'number' : 'string';
        break;
      }
      case 'min':
        options.minimum = first as number;
        break;
      case 'max':
        options.maximum = first as number;
        break;
      case 'isIso8601':
        options.format = 'date-time';
        options.type ??= 'string';
        break;
      default:
        throw new Error(
          `${dto.name}.${property}: class-validator's ${metadata.name ?? metadata.type} has no OpenAPI translation in openapi/validation-schema.ts; add one`,
        );
    }
  }
  if (options.type === undefined)
    throw new Error(`${dto.name}.${property}: no decorator says its type (IsString, IsInt, IsBoolean, IsObject, IsIn, Matches)`);
  return options;
}

/** Every validated property of the DTO (its own and inherited), as @nestjs/swagger property options. */
export function propertiesFromValidation(dto: Dto): Record<string, PropertyOptions> {
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const metadata of validationOf(dto))
    byProperty.set(metadata.propertyName, [...(byProperty.get(metadata.propertyName) ?? []), metadata]);
  return Object.fromEntries([...byProperty].map(([property, metadatas]) => [property, propertyOf(dto, property, metadatas)]));
}

/**
 * Gives every class a route handler takes as a parameter and class-validator checks (the
 * `@Body()` and `@Query()` DTOs) its schema, found through the handlers, so no DTO is left
 * out. Runs before the document is built; idempotent. Answers the DTOs' names: their schemas
 * are closed, as the validation pipe refuses unknown fields (`forbidNonWhitelisted`).
 */
export function describeValidatedDtos(handlers: readonly Handler[]): Set<string> {
  const names = new Set<string>();
  for (const handler of handlers) {
    for (const type of parameterTypes(handler)) {
      if (typeof type !== 'function' || validationOf(type as Dto).length === 0) continue;
      names.add(type.name);
      if (!Object.hasOwn(type, METADATA_FACTORY))
        Object.defineProperty(type, METADATA_FACTORY, { value: () => propertiesFromValidation(type as Dto) });
    }
  }
  return names;
}
