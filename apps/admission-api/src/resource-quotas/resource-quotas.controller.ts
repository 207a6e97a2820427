import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { validateResourceQuota, type ResourceQuota } from '@quota/domain';
import { Ledger, LedgerError, type QuotaView } from '@quota/ledger';
import { readPutIdentity, renderMetadata } from '../common/kube-object.js';
import { NamespacePipe, ObjectNamePipe } from '../common/path-params.js';
import { requesterOf } from '../auth/requester.js';

/** A stored quota as Kubernetes shows it: spec as set, status.hard and status.used canonical. */
export function renderQuota(view: QuotaView): ResourceQuota {
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: renderMetadata({ name: view.definition.name, namespace: view.namespace, version: view.version, createdAt: view.createdAt, ...(view.definition.metadata ? { metadata: view.definition.metadata } : {}) }),
    spec: view.definition.spec,
    status: { hard: view.hard, used: view.used },
  };
}

/**
 * Admin CRUD of ResourceQuota. Every change is a ledger event (QuotaDefined / Changed /
 * Removed), so the history of a quota's limits is auditable; `status.used` is the head's
 * running usage, exact at the moment of the read. Lowering `hard` below `used` is allowed,
 * as in Kubernetes, and shows as used > hard.
 */
@Controller('v1/namespaces/:namespace/resourcequotas')
export class ResourceQuotasController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  @Put(':name')
  async put(
    @Param('namespace', NamespacePipe) namespace: string,
    @Param('name', ObjectNamePipe) name: string,
    @Body() raw: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ResourceQuota> {
    const { body, expectedVersion } = readPutIdentity(raw, namespace, name, 'ResourceQuota');
    const quota = validateResourceQuota(body);
    const metadata = quota.metadata ?? {};
    const result = await this.ledger.putQuota(
      namespace,
      {
        name,
        spec: quota.spec ?? {},
        metadata: { ...(metadata.labels ? { labels: metadata.labels } : {}), ...(metadata.annotations ? { annotations: metadata.annotations } : {}) },
      },
      { actor: requesterOf(request), ...(expectedVersion === undefined ? {} : { expectedVersion }) },
    );
    response.status(result.created ? 201 : 200);
    return renderQuota(result.view);
  }

  @Get(':name')
  async get(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string): Promise<ResourceQuota> {
    const view = await this.ledger.getQuota(namespace, name);
    if (!view) throw new LedgerError('NotFound', `resourcequotas "${name}" not found`, { kind: 'resourcequotas', name });
    return renderQuota(view);
  }

  @Get()
  async list(@Param('namespace', NamespacePipe) namespace: string): Promise<{ apiVersion: 'v1'; kind: 'ResourceQuotaList'; metadata: Record<string, never>; items: ResourceQuota[] }> {
    const views = await this.ledger.listQuotas(namespace);
    return { apiVersion: 'v1', kind: 'ResourceQuotaList', metadata: {}, items: views.map(renderQuota) };
  }

  @Delete(':name')
  @HttpCode(200)
  async delete(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string, @Req() request: Request): Promise<ResourceQuota> {
    return renderQuota(await this.ledger.deleteQuota(namespace, name, { actor: requesterOf(request) }));
  }
}
