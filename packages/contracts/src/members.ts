import { z } from 'zod';
import { emailAddress, envelope } from './common';

// Teams (docs/product.md, "Teams"): a site has members, each with one role.
// The roles are ordered: each can do everything the ones before it can.

export const SITE_ROLES = ['viewer', 'editor', 'admin', 'owner'] as const;
export const siteRole = z.enum(SITE_ROLES, { message: 'Role must be one of owner, admin, editor, viewer' });
export type SiteRole = z.infer<typeof siteRole>;

/** Whether `role` includes the rights of `needed`. */
export function roleAllows(role: SiteRole | null | undefined, needed: SiteRole): boolean {
  if (!role) return false;
  return SITE_ROLES.indexOf(role) >= SITE_ROLES.indexOf(needed);
}

/** The 403 message: it names the role a refused request needs. */
export function roleNeededMessage(needed: SiteRole): string {
  return needed === 'owner' ? 'This needs the owner role.' : `This needs the ${needed} role or higher.`;
}

export const ROLE_LABELS: Record<SiteRole, string> = { owner: 'Owner', admin: 'Admin', editor: 'Editor', viewer: 'Viewer' };

/** What each role adds, as the dashboard and the help explain it. */
export const ROLE_DESCRIPTIONS: Record<SiteRole, string> = {
  owner: 'Everything, including members, API keys, identity secret and deleting the site.',
  admin: 'Everything but members, the identity secret and deleting the site: settings, API keys, VAPID keys, webhooks, subscribers, the audit log.',
  editor: 'Notifications, welcome campaigns, segments and RSS feeds: create, edit, send and schedule.',
  viewer: 'Read only: dashboard, lists and reports.',
};

/** Invitation links live 7 days (docs/security.md, "Teams"). */
export const INVITATION_TTL_DAYS = 7;
export const INVITATION_SITES_MAX = 50;

export const member = z.object({
  user_id: z.string(),
  name: z.string(),
  email: z.string(),
  role: siteRole,
  joined_at: z.string(),
});
export type Member = z.infer<typeof member>;

export const invitation = z.object({
  id: z.string(),
  email: z.string(),
  role: siteRole,
  invited_by: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
});
export type Invitation = z.infer<typeof invitation>;

export const membersResponse = envelope(z.object({ members: z.array(member), invitations: z.array(invitation), your_role: siteRole }));
export type MembersList = z.infer<typeof membersResponse>['data'];

export const inviteBody = z
  .object({
    email: emailAddress,
    role: siteRole,
    /** The other sites (of which the caller is an owner) the same link also invites to. */
    also_site_ids: z.array(z.string().min(1).max(100)).max(INVITATION_SITES_MAX, `At most ${INVITATION_SITES_MAX} sites at once`).optional(),
  })
  .strict();
export type InviteBody = z.infer<typeof inviteBody>;
export const inviteResponse = envelope(z.object({ invitations: z.array(invitation.extend({ site_id: z.string() })) }));

export const changeRoleBody = z.object({ role: siteRole }).strict();
export const memberParams = z.object({ siteId: z.string().min(1).max(100), userId: z.string().min(1).max(100) });
export const invitationParams = z.object({ siteId: z.string().min(1).max(100), id: z.string().min(1).max(100) });
export const memberResponse = envelope(z.object({ member }));
export const transferOwnershipBody = z.object({ user_id: z.string().min(1).max(100) }).strict();

const invitationToken = z.string().min(1, 'Invalid or missing invitation link').max(200, 'This invitation link is invalid or has expired');
export const invitationTokenBody = z.object({ token: invitationToken }).strict();
export const acceptInvitationAsNewBody = z
  .object({
    token: invitationToken,
    name: z.string().trim().min(1, 'Name is required').max(100, 'Name must be at most 100 characters'),
    password: z.string().min(8, 'Password must be at least 8 characters long').max(1024, 'Password must be at most 1024 characters long'),
  })
  .strict();

/** What the invitation page shows before anyone signs in: never more than the link's holder needs. */
export const invitationPreviewResponse = envelope(
  z.object({
    email: z.string(),
    sites: z.array(z.object({ name: z.string(), role: siteRole })),
    invited_by: z.string().nullable(),
    has_account: z.boolean(),
    expires_at: z.string(),
  }),
);
export type InvitationPreview = z.infer<typeof invitationPreviewResponse>['data'];
export const acceptInvitationResponse = envelope(z.object({ site_ids: z.array(z.string()) }));
export const acceptInvitationAsNewResponse = envelope(
  z.object({
    site_ids: z.array(z.string()),
    token: z.string(),
    user: z.object({ id: z.string(), name: z.string(), email: z.string(), emailVerified: z.boolean(), createdAt: z.string() }),
  }),
);
