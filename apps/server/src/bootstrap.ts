import type { AppContext } from './context';
import { createAuthService } from './features/auth/service';
import { logsArePretty } from './platform/logger';

/**
 * Sign-up is "coming soon" in the UI, so a fresh install needs another door
 * to its first account: ADMIN_EMAIL/ADMIN_PASSWORD, or a one-time setup link.
 * Returns the setup link when one was issued.
 */
export async function ensureOwnerAccount(ctx: AppContext): Promise<string | undefined> {
  const auth = createAuthService(ctx);
  if (!(await auth.isSetupRequired())) return undefined;
  const admin = ctx.config.admin;
  if (admin) {
    try {
      await auth.createUser({ name: admin.name, email: admin.email, password: admin.password, verified: true });
      ctx.log.info({ email: admin.email }, 'created the owner account from ADMIN_EMAIL');
    } catch (error) {
      // Another process may have created it a moment earlier.
      if (await auth.isSetupRequired()) throw error;
    }
    return undefined;
  }
  const token = await auth.issueSetupToken();
  const link = `${ctx.config.publicUrl}/setup?token=${token}`;
  const notice = 'No account exists yet. Create the owner account here (the link works once, for 24 hours):';
  // On a terminal the link stands on its own line, easy to see and to click;
  // in JSON it is a field of its own, easy to pick out of a log file.
  if (logsArePretty(ctx.config)) ctx.log.warn(`${notice}\n\n    ${link}`);
  else ctx.log.warn({ setupUrl: link }, `${notice} ${link}`);
  return link;
}
