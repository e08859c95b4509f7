import type { OrganizationPlanOffer } from '../../shared/card-payments/organization-plans.js';
import type { HubConfig } from '../../shared/config.js';
import { ApiError } from '../../shared/errors.js';

/** The organization plan hub offers under `slug`, or 404 `organization_plan_not_found`. */
export function organizationPlanOffer(config: HubConfig, slug: string): OrganizationPlanOffer {
  const offer = config.organizationPlans.find((plan) => plan.slug === slug);
  if (!offer) throw new ApiError('organization_plan_not_found', `hub offers no organization plan "${slug}".`);
  return offer;
}
