import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';
import { kubeStatus } from '../errors/kube-status.js';

function flatten(errors: readonly ValidationError[], prefix = ''): { field: string; message: string }[] {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * class-validator for REST DTOs: unknown fields are refused, and every problem becomes a
 * cause of one 400 Kubernetes Status that names the field.
 */
export function dtoValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: (errors) => {
      const causes = flatten(errors);
      const message = causes.map((c) => (c.message.startsWith(c.field) ? c.message : `${c.field}: ${c.message}`)).join('; ');
      return new BadRequestException(
        kubeStatus(400, message || 'the request body is invalid', { causes: causes.map((c) => ({ reason: 'FieldValueInvalid', ...c })) }),
      );
    },
  });
}
