import { idParam, promptEventBody, promptEventResponse, promptSettingsBody, promptSettingsResponse, publicPromptSettingsResponse, siteIdParam } from '@herald/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context';
import { currentUser, requireUser } from '../../platform/authenticate';
import type { MemoryRateLimit } from '../../platform/memory-rate-limiter';
import { acceptJsonSentAsText, limitPublicRequests, openCorsForPublicRoutes } from '../../platform/public-routes';
import { ok } from '../../platform/responses';
import { createPromptsService, type PromptsService } from './service';

/** A page view asks for the settings at most once, and reports at most a prompt or two. */
export const PUBLIC_PROMPT_LIMITS: { perAddress: MemoryRateLimit; perSite: MemoryRateLimit } = {
  perAddress: { limit: 120, windowMs: 60_000, maxKeys: 50_000 },
  perSite: { limit: 20_000, windowMs: 60_000, maxKeys: 20_000 },
};

/** Browsers and CDNs may keep the settings this long: a change in the dashboard reaches pages within a minute. */
const SETTINGS_MAX_AGE_SECONDS = 60;

const SETTINGS_PATH = '/public/sites/:siteId/prompt-settings';
const EVENTS_PATH = '/public/sites/:siteId/prompt-events';

/** Public routes for the browser SDK (CORS open, no credentials; docs/security.md, "Public endpoints"). */
function publicPromptRoutes(ctx: AppContext, prompts: PromptsService): FastifyPluginAsyncZod {
  return async (app) => {
    openCorsForPublicRoutes(app, [EVENTS_PATH]);
    acceptJsonSentAsText(app);
    limitPublicRequests(app, ctx.clock, {
      ...PUBLIC_PROMPT_LIMITS,
      siteMessage: (seconds) => `Too many prompt requests for this site. Please try again in ${seconds} seconds.`,
    });
    const tags = ['public'];
    const security: Array<Record<string, string[]>> = [];

    app.get(
      SETTINGS_PATH,
      {
        schema: {
          tags,
          security,
          summary: 'The opt-in prompt the SDK shows on the site’s pages, and the site’s primary VAPID key (browser SDK; CORS open)',
          description:
            '`vapid_public_key`: the key new subscriptions are made with; the SDK moves a browser subscribed with another of the site’s keys to it. `resubscribe_granted` (site setting `resubscribeGranted`): the SDK subscribes a browser whose notification permission is already granted without a prompt; `replace_foreign_subscription` (`replaceForeignSubscription`): it then replaces another provider’s subscription on the same service worker registration.',
          params: siteIdParam,
          response: { 200: publicPromptSettingsResponse },
        },
      },
      async (request, reply) => {
        const settings = await prompts.forSdk(request.params.siteId);
        return reply.header('cache-control', `public, max-age=${SETTINGS_MAX_AGE_SECONDS}`).send(ok(settings));
      },
    );

    app.post(
      EVENTS_PATH,
      {
        bodyLimit: 1024,
        schema: {
          tags,
          security,
          summary: 'Report that a prompt was shown (browser SDK; CORS open)',
          description: 'Counts toward the prompt type’s conversion in GET /api/sites/{siteId}/analytics/subscribers (`prompts`).',
          params: siteIdParam,
          body: promptEventBody,
          response: { 200: promptEventResponse },
        },
      },
      async (request) => {
        await prompts.recordShown(request.params.siteId, request.body.prompt);
        return ok({ recorded: true as const });
      },
    );
  };
}

/** Settings → Installation: the site's opt-in prompt. */
function dashboardPromptRoutes(ctx: AppContext, prompts: PromptsService): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preHandler', requireUser(ctx));
    const tags = ['sites'];

    app.get(
      '/sites/:id/prompt-settings',
      { schema: { tags, summary: 'The site’s opt-in prompt settings', params: idParam, response: { 200: promptSettingsResponse } } },
      async (request) => ok({ prompt: await prompts.get(currentUser(request).id, request.params.id) }),
    );

    app.put(
      '/sites/:id/prompt-settings',
      {
        schema: {
          tags,
          summary: 'Replace the site’s opt-in prompt settings',
          description: 'Fields left out take their defaults. `type`: `slide` (Herald’s banner), `native` (the browser’s own prompt, asked at the visitor’s next click) or `bell` (a floating button).',
          params: idParam,
          body: promptSettingsBody,
          response: { 200: promptSettingsResponse },
        },
      },
      async (request) => ok({ prompt: await prompts.replace(currentUser(request).id, request.params.id, request.body) }),
    );
  };
}

export function promptsRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const prompts = createPromptsService(ctx);
    await app.register(publicPromptRoutes(ctx, prompts));
    await app.register(dashboardPromptRoutes(ctx, prompts));
  };
}
