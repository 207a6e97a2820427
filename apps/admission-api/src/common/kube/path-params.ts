import { BadRequestException, Injectable, Param, type PipeTransform, type Type } from '@nestjs/common';
import { ApiParam, type SchemaObject } from '@nestjs/swagger';
import { isDNS1123Label, isDNS1123Subdomain } from '@quota/domain';
import { kubeStatus } from '../../errors/kube-status.js';

/**
 * Path parameters are checked before anything reads or writes: a namespace is a DNS-1123
 * label and an object name a DNS-1123 subdomain, as in Kubernetes, so an absurd path gets a
 * 400 that says what is wrong with it.
 */
@Injectable()
export class NamespacePipe implements PipeTransform<string, string> {
  transform(value: string): string {
    const problems = isDNS1123Label(value);
    if (problems.length > 0) {
      throw new BadRequestException(
        kubeStatus(400, `invalid namespace ${JSON.stringify(value)} in the path: ${problems.join('; ')}`, {
          causes: [{ reason: 'FieldValueInvalid', field: 'metadata.namespace', message: problems.join('; ') }],
        }),
      );
    }
    return value;
  }
}

@Injectable()
export class ObjectNamePipe implements PipeTransform<string, string> {
  transform(value: string): string {
    const problems = isDNS1123Subdomain(value);
    if (problems.length > 0) {
      throw new BadRequestException(
        kubeStatus(400, `invalid name ${JSON.stringify(value)} in the path: ${problems.join('; ')}`, {
          causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name', message: problems.join('; ') }],
        }),
      );
    }
    return value;
  }
}

@Injectable()
export class ReservationIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(value)) {
      throw new BadRequestException(
        kubeStatus(
          400,
          `invalid reservation id ${JSON.stringify(value.slice(0, 200))} in the path: 1 to 128 letters, digits, '.', '_' or '-'`,
        ),
      );
    }
    return value;
  }
}

/** What each pipe accepts, for the OpenAPI document (the pipe is the check, this its description). */
export const NAMESPACE_NAME_SCHEMA: SchemaObject = {
  type: 'string',
  description: 'A namespace name: a DNS-1123 label.',
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  maxLength: 63,
};
export const OBJECT_NAME_SCHEMA: SchemaObject = {
  type: 'string',
  description: 'An object name: a DNS-1123 subdomain.',
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
  maxLength: 253,
};
export const RESERVATION_ID_SCHEMA: SchemaObject = { type: 'string', description: 'A reservation id.', pattern: '^[A-Za-z0-9._-]{1,128}$' };

/**
 * A path parameter checked by its pipe and described by the same decorator: Nest's `@Param` with
 * the pipe, and @nestjs/swagger's `@ApiParam` with the schema of what the pipe accepts, so the
 * OpenAPI document says what the check is, from the place that makes it.
 */
function checkedPathParam(name: string, pipe: Type<PipeTransform<string, string>>, schema: SchemaObject): ParameterDecorator {
  const param = Param(name, pipe);
  const described = ApiParam({ name, required: true, schema });
  return (target, method, index) => {
    param(target, method, index);
    const descriptor = method === undefined ? undefined : Object.getOwnPropertyDescriptor(target, method);
    if (method !== undefined && descriptor) described(target, method, descriptor);
  };
}

/** A namespace in the path (a DNS-1123 label). */
export const NamespaceParam = (name = 'namespace'): ParameterDecorator => checkedPathParam(name, NamespacePipe, NAMESPACE_NAME_SCHEMA);
/** An object's name in the path (a DNS-1123 subdomain). */
export const ObjectNameParam = (name = 'name'): ParameterDecorator => checkedPathParam(name, ObjectNamePipe, OBJECT_NAME_SCHEMA);
/** A reservation id in the path. */
export const ReservationIdParam = (name = 'id'): ParameterDecorator => checkedPathParam(name, ReservationIdPipe, RESERVATION_ID_SCHEMA);
