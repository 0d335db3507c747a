import { INVITATION_TTL_DAYS, ROLE_LABELS, type SiteRole } from '@herald/contracts';
import type { MailMessage } from '../../platform/mail';

// Links are built from PUBLIC_URL, never from the request's Host header (docs/security.md).

export function invitationMail(input: { to: string; publicUrl: string; token: string; inviter: string; sites: Array<{ name: string; role: SiteRole }> }): MailMessage {
  const link = `${input.publicUrl}/invitation?token=${encodeURIComponent(input.token)}`;
  const siteLines = input.sites.map((site) => `- ${site.name} (${ROLE_LABELS[site.role]})`);
  return {
    to: input.to,
    subject: `${input.inviter} invited you to Herald`,
    text: [
      `${input.inviter} invited you to work on ${input.sites.length === 1 ? 'a site' : `${input.sites.length} sites`} in Herald:`,
      ...siteLines,
      '',
      `Accept the invitation here: ${link}`,
      '',
      `The link works once and expires in ${INVITATION_TTL_DAYS} days. If you do not know ${input.inviter}, ignore this email.`,
    ].join('\n'),
  };
}
