import type { DirectRoute } from '../common/direct-routes.js';
import { ADMISSION_PATHS } from '../observability/admission-timing.js';
import { AdmissionReviewController } from './admission-review.controller.js';

function route(handler: 'validate' | 'mutate'): DirectRoute {
  const call = (controller: AdmissionReviewController, request: Parameters<DirectRoute['call']>[1]): Promise<unknown> => controller[handler](request.body, request);
  return { controller: AdmissionReviewController, handler, method: 'POST', path: ADMISSION_PATHS[handler], call: call as DirectRoute['call'] };
}

/** The webhook's two handlers, which kube-apiserver calls for every write it admits: served as plain functions (common/direct-routes.ts). */
export const WEBHOOK_ROUTES: readonly DirectRoute[] = [route('validate'), route('mutate')];
