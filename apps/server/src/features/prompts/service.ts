import { completePromptSettings, DEFAULT_PROMPT_SETTINGS, readPromptSettings, type PromptSettings, type promptSettingsBody, type PromptType, type PublicPromptSettings } from '@herald/contracts';
import type { z } from 'zod';
import type { AppContext } from '../../context';
import { notFound } from '../../platform/errors';
import { addToPromptStats } from '../analytics/site-counters';
import { recordAudit } from '../audit-log/record';
import { requireSiteRole } from '../sites/service';
import * as repo from './repository';

function parseStored(json: string | null): PromptSettings {
  if (!json) return { ...DEFAULT_PROMPT_SETTINGS };
  try {
    return readPromptSettings(JSON.parse(json));
  } catch {
    return { ...DEFAULT_PROMPT_SETTINGS };
  }
}

/** The opt-in prompt a site's visitors see (Settings → Installation), and the SDK's reports of showing it. */
export function createPromptsService(ctx: Pick<AppContext, 'db' | 'clock'>) {
  const { db, clock } = ctx;
  return {
    async get(userId: string, siteId: string): Promise<PromptSettings> {
      const site = await requireSiteRole(ctx, userId, siteId, 'viewer');
      return parseStored(site.prompt_settings);
    },

    /** Replaces the settings; a field left out takes its default. */
    async replace(userId: string, siteId: string, input: z.output<typeof promptSettingsBody>): Promise<PromptSettings> {
      // The prompt is part of the site's settings: the admin role, as for PATCH /sites/{id}.
      const site = await requireSiteRole(ctx, userId, siteId, 'admin');
      const settings = completePromptSettings(input);
      await db.transaction().execute(async (trx) => {
        await repo.savePromptSettings(trx, siteId, JSON.stringify(settings), clock.now());
        await recordAudit(ctx, { siteId, actor: { userId }, action: 'settings_changed', subject: { type: 'site', id: siteId, label: site.name }, changedFields: ['prompt_settings'] }, trx);
      });
      return settings;
    },

    /**
     * Public: what the SDK reads on the site's pages: the prompt, the primary
     * VAPID key (browsers on another key move to it), and whether a visitor
     * who already allowed notifications is subscribed without a prompt.
     */
    async forSdk(siteId: string): Promise<PublicPromptSettings> {
      const row = await repo.findPromptSettings(db, siteId);
      if (!row) throw notFound('Site');
      return {
        prompt: parseStored(row.prompt_settings),
        vapid_public_key: row.vapid_public_key,
        resubscribe_granted: row.resubscribe_granted === 1,
        replace_foreign_subscription: row.replace_foreign_subscription === 1,
      };
    },

    /** Public: the SDK showed a prompt (the denominator of its conversion). */
    async recordShown(siteId: string, prompt: PromptType): Promise<void> {
      if (!(await repo.siteExists(db, siteId))) throw notFound('Site');
      await addToPromptStats(db, siteId, clock.now(), prompt, { shown: 1 });
    },
  };
}

export type PromptsService = ReturnType<typeof createPromptsService>;
