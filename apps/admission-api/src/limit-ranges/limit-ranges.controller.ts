import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { assertDefinitionSize, limitRangeSizeErrors, prepareLimitRangeForStorage, Resources, type LimitRange, type LimitRangeItem } from '@quota/domain';
import { DefinitionQueries, LedgerCommands, LedgerError, type DefinitionChange, type LimitRangeView, type Page } from '@quota/ledger';
import { readPutIdentity, renderMetadata } from '../common/kube-object.js';
import { NamespacePipe, ObjectNamePipe } from '../common/path-params.js';
import { requesterOf } from '../auth/requester.js';
import { EventsQueryDto } from '../audit/audit.dto.js';
import { definitionHistory } from '../audit/definition-history.js';
import { dtoValidationPipe } from '../common/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/handler-interceptor.js';
import { AnswersPosition, sendPosition } from '../common/ledger-position.js';

export function renderLimitRange(view: LimitRangeView): LimitRange {
  return {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: renderMetadata({ name: view.definition.name, namespace: view.namespace, version: view.version, createdAt: view.createdAt, ...(view.definition.metadata ? { metadata: view.definition.metadata } : {}) }),
    spec: view.definition.spec,
  };
}

const QUANTITY_MAPS = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** Every quantity of an item in canonical form (`1.5Gi` → `1536Mi`), as every response shows them. */
function canonicalItem(item: LimitRangeItem): LimitRangeItem {
  const out: Record<string, unknown> = { ...item };
  for (const key of QUANTITY_MAPS) {
    const raw = item[key];
    if (raw) out[key] = Resources.canonicalResourceList(Resources.parseResourceList(raw, `spec.limits.${key}`));
  }
  return out as unknown as LimitRangeItem;
}

/**
 * Admin CRUD of LimitRange. A stored LimitRange is what the API server would store: its
 * defaulting applied (a Container item's missing `default` comes from `max`, ...), then
 * validated, so a read shows the defaults admission will use.
 */
@Controller('v1/namespaces/:namespace/limitranges')
export class LimitRangesController {
  constructor(
    @Inject(LedgerCommands) private readonly ledger: LedgerCommands,
    @Inject(DefinitionQueries) private readonly definitions: DefinitionQueries,
  ) {}

  @Allow('admin')
  @JsonBody('definition')
  @AnswersPosition(201, 200)
  @Put(':name')
  async put(
    @Param('namespace', NamespacePipe) namespace: string,
    @Param('name', ObjectNamePipe) name: string,
    @Body() raw: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LimitRange> {
    const { body, expectedVersion } = readPutIdentity(raw, namespace, name, 'LimitRange');
    const limitRange = prepareLimitRangeForStorage(body);
    assertDefinitionSize('LimitRange', name, limitRangeSizeErrors(limitRange));
    const metadata = limitRange.metadata ?? {};
    const result = await this.ledger.putLimitRange(
      namespace,
      {
        name,
        spec: { limits: (limitRange.spec?.limits ?? []).map(canonicalItem) },
        metadata: { ...(metadata.labels ? { labels: metadata.labels } : {}), ...(metadata.annotations ? { annotations: metadata.annotations } : {}) },
      },
      { actor: requesterOf(request), ...(expectedVersion === undefined ? {} : { expectedVersion }) },
    );
    response.status(result.created ? 201 : 200);
    sendPosition(response, result.position);
    return renderLimitRange(result.view);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':name')
  async get(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string): Promise<LimitRange> {
    const view = await this.definitions.getLimitRange(namespace, name);
    if (!view) throw new LedgerError('NotFound', `limitranges "${name}" not found`, { kind: 'limitranges', name });
    return renderLimitRange(view);
  }

  /** Every change of its definition: who, when, before and after (also after it was deleted). */
  @Allow('admin', 'auditor')
  @Get(':name/history')
  history(
    @Param('namespace', NamespacePipe) namespace: string,
    @Param('name', ObjectNamePipe) name: string,
    @Query(dtoValidationPipe()) query: EventsQueryDto,
  ): Promise<Page<DefinitionChange>> {
    return definitionHistory(this.definitions, namespace, 'limitRange', name, query);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get()
  async list(@Param('namespace', NamespacePipe) namespace: string): Promise<{ apiVersion: 'v1'; kind: 'LimitRangeList'; metadata: Record<string, never>; items: LimitRange[] }> {
    const views = await this.definitions.listLimitRanges(namespace);
    return { apiVersion: 'v1', kind: 'LimitRangeList', metadata: {}, items: views.map(renderLimitRange) };
  }

  @Allow('admin')
  @AnswersPosition(200)
  @Delete(':name')
  @HttpCode(200)
  async delete(
    @Param('namespace', NamespacePipe) namespace: string,
    @Param('name', ObjectNamePipe) name: string,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<LimitRange> {
    const removed = await this.ledger.deleteLimitRange(namespace, name, { actor: requesterOf(request) });
    sendPosition(response, removed.position);
    return renderLimitRange(removed.view);
  }
}
