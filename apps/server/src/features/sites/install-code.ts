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
  const workerUrl = new URL('/' + SERVICE_WORKER_FILE_NAME, site.url).toString();
  const nextSteps = [
    'Paste the snippet just before the closing </body> tag on every page where visitors may subscribe.',
    `Create a file named ${SERVICE_WORKER_FILE_NAME} at the root of your site (so it is served at ${workerUrl}) with the one line shown. If your site already has a service worker, add that importScripts line to it instead and set data-worker="/your-worker.js" on the script tag.`,
    'Serve your site over HTTPS: browsers only allow push on secure pages (localhost is the exception while testing).',
    'Run "Check installation" in the setup checklist (Dashboard, or Settings → Installation): Herald fetches your page and the worker file and says what to fix.',
    'Visitors see the opt-in prompt you choose under Settings → Installation; you can also call herald.subscribe() from your own button. New subscribers appear on the Subscribers page.',
    'Make your own browser a test device with the link in the checklist, then use "Send test" in the notification composer: a test goes to your test devices only and counts nowhere.',
  ];
  return {
    // Spec §7 "the snippet to paste before </body>": the page part only. The
    // worker line lives in `serviceWorker`; a page that showed it would print it as text.
    installCode: snippet,
    snippet,
    serviceWorker: { fileName: SERVICE_WORKER_FILE_NAME, content: workerContent },
    nextSteps,
    warnings: installWarnings(publicUrl),
  };
}

/** What would stop the code from working on the customer's pages, whatever they do. */
function installWarnings(publicUrl: string): string[] {
  if (new URL(publicUrl).protocol === 'https:') return [];
  return [
    `Herald's address (PUBLIC_URL) is ${publicUrl}, not https: pages served over https block the script and the worker as mixed content, so only pages on http://localhost can subscribe. Serve Herald over HTTPS and set PUBLIC_URL to that address.`,
  ];
}
