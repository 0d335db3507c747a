// What a campaign step sends, derived from what the owner wrote plus the
// campaign's settings (UTM parameters, campaign icon).
import { UTM_PARAM_NAMES, withUtmParams, type ActionButton, type UtmParams } from '@herald/contracts';
import type { WelcomeCampaignRow } from '../../db/schema';
import type { NotificationContent } from '../notifications/create';

export function utmParamsOf(campaign: Pick<WelcomeCampaignRow, 'utm_source' | 'utm_medium' | 'utm_campaign'>): UtmParams | null {
  const params: UtmParams = { utm_source: campaign.utm_source, utm_medium: campaign.utm_medium, utm_campaign: campaign.utm_campaign };
  return UTM_PARAM_NAMES.some((name) => params[name]) ? params : null;
}

/**
 * Adds the campaign's UTM parameters to a destination URL (spec §2 New
 * campaign form, "UTM params"). A parameter the URL already carries is kept:
 * what the owner typed into one step wins over the campaign-wide value.
 * A URL that gains nothing is returned exactly as written.
 */
export interface AuthoredStepContent {
  title: string;
  message: string;
  destination_url: string;
  icon_url: string | null;
  image_url: string | null;
  actions: ActionButton[];
}


/** The notification a step sends: UTM parameters on its links, the campaign icon when the step has none (then the site's, at send time). */
export function sentStepContent(step: AuthoredStepContent, campaign: Pick<WelcomeCampaignRow, 'icon_url' | 'utm_source' | 'utm_medium' | 'utm_campaign'>): NotificationContent {
  const utm = utmParamsOf(campaign);
  const actions = step.actions.map((action) => ({ title: action.title, url: withUtmParams(action.url, utm) }));
  return {
    title: step.title,
    message: step.message,
    destination_url: withUtmParams(step.destination_url, utm),
    icon_url: step.icon_url ?? campaign.icon_url,
    image_url: step.image_url,
    actions,
  };
}
