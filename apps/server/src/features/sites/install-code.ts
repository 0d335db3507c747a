import type { InstallCode } from '@herald/contracts';
import type { SiteRow } from '../../db/schema';

/** The worker file a site puts at its root; it only imports Herald's worker. */
export const SERVICE_WORKER_FILE_NAME = 'herald-sw.js';

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/**
 * What a site owner pastes (Settings → Installation, GET /sites/{id}/install-code).
 * The snippet reads its configuration from data- attributes, so the same
 * bundled script serves every site; see packages/sdk.
 */
export function buildInstallCode(site: SiteRow, publicUrl: string): InstallCode {
  const snippet = [
    // No user text in the comment (docs/security.md, "Install code"): a site
    // name such as `--->` or `--!>` would end it early, and what followed
    // would become markup on the customer's page.
    '<!-- Herald web push -->',
    `<script src="${publicUrl}/sdk/herald.js" data-site-id="${escapeAttribute(site.id)}" data-vapid-key="${site.vapid_public_key}" async></script>`,
  ].join('\n');
  const workerContent = `importScripts("${publicUrl}/sdk/herald-sw.js");\n`;
  const nextSteps = [
    'Paste the snippet just before the closing </body> tag on every page where visitors may subscribe.',
    `Create a file named ${SERVICE_WORKER_FILE_NAME} at the root of your site (so it is served at ${new URL('/' + SERVICE_WORKER_FILE_NAME, site.url).toString()}) with the one line shown. If your site already has a service worker, add that importScripts line to it instead and set data-worker="/your-worker.js" on the script tag.`,
    'Serve your site over HTTPS: browsers only allow push on secure pages (localhost is the exception while testing).',
    'Visitors see a small "Get notifications" prompt; you can also call herald.subscribe() from your own button. New subscribers appear on the Subscribers page.',
    'Send a test notification from Notifications → New Notification.',
  ];
  const installCode = [
    '<!-- 1. Paste before </body> on your pages -->',
    snippet,
    '',
    `<!-- 2. Save as /${SERVICE_WORKER_FILE_NAME} at your site root -->`,
    workerContent.trimEnd(),
  ].join('\n');
  return { installCode, snippet, serviceWorker: { fileName: SERVICE_WORKER_FILE_NAME, content: workerContent }, nextSteps };
}
