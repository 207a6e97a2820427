import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';
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
