import type { DirectRoute } from '../common/direct-routes.js';
import { AdmissionReviewController } from './admission-review.controller.js';

function route(handler: 'validate' | 'mutate', path: RegExp): DirectRoute {
  const call = (controller: AdmissionReviewController, request: Parameters<DirectRoute['call']>[1]): Promise<unknown> => controller[handler](request.body, request);
  return { controller: AdmissionReviewController, handler, method: 'POST', path, call: call as DirectRoute['call'] };
}

/** The webhook's two handlers, which kube-apiserver calls for every write it admits: served as plain functions (common/direct-routes.ts). */
export const WEBHOOK_ROUTES: readonly DirectRoute[] = [route('validate', /^\/v1\/admission\/validate\/?$/i), route('mutate', /^\/v1\/admission\/mutate\/?$/i)];
