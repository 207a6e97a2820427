import { Controller, Get, Inject } from '@nestjs/common';
import type { NamespaceQueue } from '@quota/api';
import { QueueQueries } from '@quota/ledger';
import { Allow } from '../auth/roles.decorator.js';
import { NamespaceParam } from '../common/kube/path-params.js';

/** The namespace's queue of reservations waiting for room, in the order they will be admitted, each with the wait to expect. */
@Controller('v1/namespaces/:namespace/queue')
export class QueueController {
  constructor(@Inject(QueueQueries) private readonly queue: QueueQueries) {}

  @Allow('admin', 'auditor', 'admission')
  @Get()
  list(@NamespaceParam() namespace: string): Promise<NamespaceQueue> {
    return this.queue.queueWithEstimates(namespace);
  }
}
