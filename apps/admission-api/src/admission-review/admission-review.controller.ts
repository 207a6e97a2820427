import { BadRequestException, Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { Request, Response } from 'express';
import { assertClusterWide, assertNamespaceAllowed } from '../auth/authenticator.js';
import { onBehalfOf, requesterOf } from '../auth/requester.js';
import { ClusterWriter, DefinitionQueries, LedgerCommands, LedgerError } from '@quota/ledger';
import type { AppConfig } from '@quota/config';
import { admissionObjectName, alwaysDenyRefusal, forbiddenText, namespaceDeletionRefusal, pluginEnabled } from '@quota/domain';
import { APP_CONFIG } from '../config/app-config.module.js';
import { kubeStatus } from '../errors/kube-status.js';
import { Metrics } from '../observability/metrics.js';
import { ReconcileTrigger } from '../reconcile/reconcile-trigger.js';
import { definitionAuthorPatch, definitionWarnings, isDefinitionReview } from './definition-author.js';
import { definitionRefusal } from './definition-validation.js';
import { limitRangeDefaultsPatch } from './limit-range-defaults.js';
import { isNamespaceReview, namespaceOfReview, reviewedNamespaceName } from './namespace-review.js';
import {
  allowResponse,
  decisionAnnotations,
  denyResponse,
  parseAdmissionReview,
  ReviewMalformed,
  type AdmissionReviewRequest,
  type AdmissionReviewResponse,
} from './admission-review.js';
import { Allow, NamespaceInBody } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { noteAnswer, TimedAdmission } from '../observability/admission-timing.js';
import type { SelectionTooLarge } from '../common/json-scan/json-select.js';
import { REVIEW_SCAN, reviewBodyOf } from './review-body.js';

/** The review to decide (what admission reads of it), and why its objects were left out when they were more than that. */
function parse(body: unknown): { review: AdmissionReviewRequest; tooLarge?: SelectionTooLarge } {
  return readReview(() => {
    const { review, tooLarge } = reviewBodyOf(body);
    return { review: parseAdmissionReview(review), ...(tooLarge ? { tooLarge } : {}) };
  });
}

/**
 * A review whose objects hold more of what admission reads than it decides on (@quota/domain
 * SELECTED_*: a pod's 300 containers, a Namespace's 300 KB of labels): refused by name, as the
 * API server refuses an object over its own limits, and never decided on part of it.
 */
function tooLargeResponse(review: AdmissionReviewRequest, tooLarge: SelectionTooLarge): AdmissionReviewResponse {
  const what = forbiddenText(
    review.resource,
    review.name ?? '',
    `${tooLarge.field}: ${tooLarge.detail}; the fields admission reads of one object are bounded`,
  );
  return denyResponse(review.uid, 413, what);
}

/** A ReviewMalformed from `read` as the 400 Status kube-apiserver applies its failurePolicy to. */
function readReview<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof ReviewMalformed)) throw error;
    throw new BadRequestException(
      kubeStatus(400, `the AdmissionReview is malformed: ${error.message}`, {
        causes: [{ reason: 'FieldValueInvalid', field: error.field, message: error.problem }],
      }),
    );
  }
}

/**
 * The Kubernetes admission webhook (register with `admissionReviewVersions: [v1]`,
 * `sideEffects: NoneOnDryRun`). A decision, allowed or denied, is HTTP 200. When the ledger
 * cannot decide (retries exhausted, database down) the answer is HTTP 503: kube-apiserver then
 * applies the webhook's failurePolicy — `Fail` (recommended for quota: nothing is admitted
 * unchecked) or `Ignore`.
 */
@Controller('v1/admission')
export class AdmissionReviewController {
  constructor(
    @Inject(LedgerCommands) private readonly ledger: LedgerCommands,
    @Inject(DefinitionQueries) private readonly definitions: DefinitionQueries,
    @Inject(ClusterWriter) private readonly cluster: ClusterWriter,
    @Inject(ReconcileTrigger) private readonly reconcile: ReconcileTrigger,
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * LimitRange defaults as a JSONPatch (LimitRanger's mutating step; none while it is disabled),
   * the author of a LedgerQuota or LimitRange as an annotation, or AlwaysDeny's refusal. No side effects: nothing is written, not even a decision.
   */
  @Allow('webhook')
  @NamespaceInBody()
  @TimedAdmission('mutate')
  @JsonBody('admission', REVIEW_SCAN)
  @Post('mutate')
  @HttpCode(200)
  async mutate(@Body() body: unknown, @Req() request: Request): Promise<AdmissionReviewResponse> {
    const { review, tooLarge } = parse(body);
    return noteAnswer(
      request.res as Response,
      tooLarge ? this.refuseTooLarge(review, tooLarge, request) : await this.mutation(review, request),
    );
  }

  /** LimitRange validation and the quota check; an allowed CREATE/UPDATE appends a reservation. */
  @Allow('webhook')
  @NamespaceInBody()
  @TimedAdmission('validate')
  @JsonBody('admission', REVIEW_SCAN)
  @Post('validate')
  @HttpCode(200)
  async validate(@Body() body: unknown, @Req() request: Request): Promise<AdmissionReviewResponse> {
    const { review, tooLarge } = parse(body);
    return noteAnswer(
      request.res as Response,
      tooLarge ? this.refuseTooLarge(review, tooLarge, request) : await this.validation(review, request),
    );
  }

  private refuseTooLarge(review: AdmissionReviewRequest, tooLarge: SelectionTooLarge, request: Request): AdmissionReviewResponse {
    if (review.namespace) assertNamespaceAllowed(request, review.namespace);
    return tooLargeResponse(review, tooLarge);
  }

  private async mutation(review: AdmissionReviewRequest, request: Request): Promise<AdmissionReviewResponse> {
    if (review.namespace) assertNamespaceAllowed(request, review.namespace);
    const denied = this.alwaysDenied(review);
    if (denied) return denied;
    // A LedgerQuota or LimitRange: refused as its REST kind is when invalid; else who made it, for the reconciler to record in the ledger.
    if (isDefinitionReview(review)) {
      const refusal = definitionRefusal(review);
      if (refusal) return denyResponse(review.uid, refusal.code, refusal.message);
      return allowResponse(review.uid, definitionAuthorPatch(review, onBehalfOf(request, review.username).onBehalfOf), {
        warnings: definitionWarnings(review),
      });
    }
    if (!review.namespace || !review.object || !pluginEnabled(this.config.admission.plugins, 'LimitRanger'))
      return allowResponse(review.uid);
    const limitRanges = await this.definitions.limitRanges(review.namespace);
    return allowResponse(review.uid, limitRangeDefaultsPatch(review, limitRanges));
  }

  private async validation(review: AdmissionReviewRequest, request: Request): Promise<AdmissionReviewResponse> {
    if (review.namespace) assertNamespaceAllowed(request, review.namespace);
    if (isNamespaceReview(review)) return this.recordNamespace(review, request);
    // Cluster-scoped objects are outside every namespace's quota; only AlwaysDeny refuses them.
    if (!review.namespace) return this.alwaysDenied(review) ?? allowResponse(review.uid);
    // LedgerError Unavailable is not caught: its 503 hands the request to the failurePolicy.
    const { result, managed, decisionId } = await this.ledger.admit({
      namespace: review.namespace,
      source: 'webhook',
      request: {
        operation: review.operation,
        groupResource: { group: review.resource.group, resource: review.resource.resource },
        ...(review.subResource ? { subresource: review.subResource } : {}),
        namespace: review.namespace,
        ...(review.name ? { name: review.name } : {}),
        ...(review.object ? { object: review.object } : {}),
        ...(review.oldObject ? { oldObject: review.oldObject } : {}),
      },
      requestKey: `review:${review.uid}`,
      dryRun: review.dryRun,
      requester: requesterOf(request),
      ...onBehalfOf(request, review.username),
    });
    this.metrics.decided('webhook', result);
    // Only where the ledger keeps reservations: a namespace it never managed has nothing to release.
    if (review.operation === 'DELETE' && !review.dryRun && result.allowed && managed) this.reconcile.afterDelete(review.namespace);
    const extras = {
      auditAnnotations: decisionAnnotations(decisionId, result.reservationId),
      ...(result.warnings ? { warnings: result.warnings } : {}),
    };
    return result.allowed
      ? allowResponse(review.uid, undefined, extras)
      : denyResponse(review.uid, result.code, result.message ?? 'denied', extras);
  }

  /** AlwaysDeny's answer to a review it refuses (every one, while it runs); the ledger decides the rest. */
  private alwaysDenied(review: AdmissionReviewRequest): AdmissionReviewResponse | undefined {
    const denied = alwaysDenyRefusal(
      this.config.admission.plugins,
      review.resource,
      admissionObjectName(review.object ?? review.oldObject, review.name),
    );
    return denied ? denyResponse(review.uid, 403, denied) : undefined;
  }

  /**
   * A Namespace's CREATE, UPDATE or DELETE (the kube-apiserver's alone: the webhook role). Quota
   * does not limit namespaces, but labels choose the ClusterResourceQuotas covering one: a relabel
   * that would put it under a shared quota covering as many namespaces as one may is refused.
   * Where the reconciler lists the cluster (NAMESPACE_LABELS_FROM=cluster), labels are taken from
   * the stored object, by resourceVersion, never from the review: it is validated before it is
   * stored and may yet fail, and a relabel that failed must not move usage. The Namespace is
   * read back once stored (a job of the reconciler's), and the interval's listing records the
   * rest, removals included. Without such a listing the review is the only word there is, and is
   * recorded as it passes. When the ledger cannot answer, the 503 hands the request to the
   * failurePolicy as for any other review.
   */
  private async recordNamespace(review: AdmissionReviewRequest, request: Request): Promise<AdmissionReviewResponse> {
    const name = readReview(() => reviewedNamespaceName(review));
    assertClusterWide(request, `Namespace "${name}"`);
    // NamespaceLifecycle, then AlwaysDeny: refused, nothing recorded.
    const immortal = review.operation === 'DELETE' ? namespaceDeletionRefusal(name, this.config.admission.plugins) : undefined;
    if (immortal) return denyResponse(review.uid, 403, immortal);
    const denied = this.alwaysDenied(review);
    if (denied) return denied;
    if (review.dryRun || review.operation === 'CONNECT') return allowResponse(review.uid);
    const fromCluster = this.config.namespaceLabelsFrom === 'cluster';
    if (review.operation === 'DELETE') {
      if (!fromCluster) await this.forgetNamespace(name, request, review.uid);
      return allowResponse(review.uid);
    }
    const definition = readReview(() => namespaceOfReview(review));
    if (fromCluster) {
      const problem = await this.cluster.relabelProblem(definition);
      if (problem) return denyResponse(review.uid, 403, problem);
      this.reconcile.namespaceStored(name);
      return allowResponse(review.uid);
    }
    try {
      await this.cluster.putNamespace(definition, { actor: requesterOf(request), requestId: `review:${review.uid}` });
    } catch (error) {
      if (error instanceof LedgerError && error.code === 'Forbidden') return denyResponse(review.uid, 403, error.message);
      throw error;
    }
    return allowResponse(review.uid);
  }

  private async forgetNamespace(name: string, request: Request, uid: string): Promise<void> {
    await this.cluster.deleteNamespace(name, { actor: requesterOf(request), requestId: `review:${uid}` }).catch((error: unknown) => {
      // A namespace the ledger never recorded has nothing to forget.
      if (!(error instanceof LedgerError && error.code === 'NotFound')) throw error;
    });
  }
}
