import { BadRequestException, ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { FIELD_ERRORS_MAX } from '@quota/domain';
import { kubeStatus } from '../../errors/kube-status.js';

/**
 * The most fields a DTO body or query may have: every DTO here has fewer than twenty, and
 * class-validator builds an error per field it does not know (a body of 200,000 unknown fields
 * was 200,000 errors).
 */
export const DTO_FIELDS_MAX = 64;

function flatten(errors: readonly ValidationError[], prefix = ''): { field: string; message: string }[] {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** class-validator, after a body or query with more fields than any DTO has is refused unread. */
class BoundedValidationPipe extends ValidationPipe {
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const fields = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value).length : 0;
    if ((metadata.type === 'body' || metadata.type === 'query') && fields > DTO_FIELDS_MAX) {
      throw new BadRequestException(
        kubeStatus(400, `the request ${metadata.type} has ${fields} fields; it may have at most ${DTO_FIELDS_MAX}`),
      );
    }
    return super.transform(value, metadata);
  }
}

/**
 * class-validator for REST DTOs: unknown fields are refused, and every problem becomes a
 * cause of one 400 Kubernetes Status that names the field (at most FIELD_ERRORS_MAX of them).
 */
export function dtoValidationPipe(): ValidationPipe {
  return new BoundedValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => {
      const causes = flatten(errors).slice(0, FIELD_ERRORS_MAX);
      const message = causes.map((c) => (c.message.startsWith(c.field) ? c.message : `${c.field}: ${c.message}`)).join('; ');
      return new BadRequestException(
        kubeStatus(400, message || 'the request body is invalid', { causes: causes.map((c) => ({ reason: 'FieldValueInvalid', ...c })) }),
      );
    },
  });
}
