import { ROLE_DESCRIPTIONS, ROLE_LABELS, SITE_ROLES, type Member, type Site, type SiteRole } from '@herald/contracts';
import { Crown, LogOut, Mail, Trash2, UserPlus, Users } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { Alert, Badge, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, Field, Input, Select, Spinner } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useAuthStore } from '../../../lib/auth-store';
import { confirmAction, notify } from '../../../lib/dialogs';
import { useSitesStore } from '../../../lib/sites-store';
import {
  useChangeRoleMutation,
  useInviteMutation,
  useLeaveSiteMutation,
  useMembersQuery,
  useRemoveMemberMutation,
  useRevokeInvitationMutation,
  useTransferOwnershipMutation,
} from '../api';

/** Highest first, as people read a team list. */
const ROLES_HIGH_FIRST = [...SITE_ROLES].reverse();

function RoleList() {
  return (
    <dl className="grid gap-2 text-sm sm:grid-cols-2" aria-label="What each role can do">
      {ROLES_HIGH_FIRST.map((role) => (
        <div key={role} className="rounded-lg border border-slate-200 p-3">
          <dt className="font-semibold text-slate-900">{ROLE_LABELS[role]}</dt>
          <dd className="text-slate-600">{ROLE_DESCRIPTIONS[role]}</dd>
        </div>
      ))}
    </dl>
  );
}

function InviteForm({ site }: { site: Site }) {
  const invite = useInviteMutation(site.id);
  const sites = useSitesStore((s) => s.sites);
  const ownedElsewhere = sites.filter((other) => other.id !== site.id && other.role === 'owner');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<SiteRole>('editor');
  const [also, setAlso] = useState<string[]>([]);
  const [sentTo, setSentTo] = useState<string | null>(null);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    setSentTo(null);
    invite.mutate(
      { email: email.trim(), role, alsoSiteIds: also },
      {
        onSuccess: () => {
          setSentTo(email.trim());
          setEmail('');
          setAlso([]);
        },
      },
    );
  }

  return (
    <form onSubmit={onSubmit} aria-label="Invite a member" className="flex flex-col gap-4">
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <Field label="Email" required className="flex-1" hint="They get a link valid 7 days, usable once.">
          {(control) => <Input {...control} type="email" value={email} onChange={(event) => setEmail(event.target.value)} autoComplete="off" placeholder="colleague@example.com" />}
        </Field>
        <Field label="Role" className="sm:w-40">
          {(control) => (
            <Select {...control} value={role} onChange={(event) => setRole(event.target.value as SiteRole)}>
              {ROLES_HIGH_FIRST.map((option) => (
                <option key={option} value={option}>
                  {ROLE_LABELS[option]}
                </option>
              ))}
            </Select>
          )}
        </Field>
      </div>
      {ownedElsewhere.length > 0 ? (
        <fieldset className="flex flex-col gap-2">
          <legend className="mb-1 text-sm font-medium text-slate-700">Also invite to</legend>
          {ownedElsewhere.map((other) => (
            <label key={other.id} className="flex items-center gap-2 text-sm text-slate-700">
              <input
                type="checkbox"
                className="size-4 rounded border-slate-300"
                checked={also.includes(other.id)}
                onChange={(event) => setAlso((ids) => (event.target.checked ? [...ids, other.id] : ids.filter((id) => id !== other.id)))}
              />
              {other.name}
            </label>
          ))}
        </fieldset>
      ) : null}
      <div>
        <Button type="submit" loading={invite.isPending} disabled={email.trim() === ''} icon={<UserPlus className="size-4" aria-hidden="true" />}>
          Send invitation
        </Button>
      </div>
      {invite.isError ? <Alert tone="error">{errorMessage(invite.error, 'Failed to send the invitation')}</Alert> : null}
      {sentTo ? <Alert tone="success">Invitation sent to {sentTo}.</Alert> : null}
    </form>
  );
}

function MemberRow({ site, member, yourRole, isYou, onlyOwner }: { site: Site; member: Member; yourRole: SiteRole; isYou: boolean; onlyOwner: boolean }) {
  const navigate = useNavigate();
  const changeRole = useChangeRoleMutation(site.id);
  const remove = useRemoveMemberMutation(site.id);
  const transfer = useTransferOwnershipMutation(site.id);
  const leave = useLeaveSiteMutation();
  const isOwner = yourRole === 'owner';
  const fail = (fallback: string) => (error: unknown) => notify(errorMessage(error, fallback));

  return (
    <li className="flex flex-col gap-3 py-3 sm:flex-row sm:items-center" data-testid="member-row">
      <div className="min-w-0 flex-1">
        <p className="truncate text-sm font-medium text-slate-900">
          {member.name} {isYou ? <span className="text-slate-500">(you)</span> : null}
        </p>
        <p className="truncate text-xs text-slate-600">{member.email}</p>
      </div>
      <div className="flex flex-wrap items-center gap-2">
        {isOwner ? (
          <Select
            aria-label={`Role of ${member.name}`}
            value={member.role}
            className="w-32"
            disabled={changeRole.isPending}
            onChange={(event) => changeRole.mutate({ userId: member.user_id, role: event.target.value as SiteRole }, { onError: fail('Failed to change the role') })}
          >
            {ROLES_HIGH_FIRST.map((option) => (
              <option key={option} value={option}>
                {ROLE_LABELS[option]}
              </option>
            ))}
          </Select>
        ) : (
          <Badge tone={member.role === 'owner' ? 'accent' : 'neutral'}>{ROLE_LABELS[member.role]}</Badge>
        )}
        {isOwner && !isYou && member.role !== 'owner' ? (
          <Button
            size="sm"
            variant="secondary"
            loading={transfer.isPending}
            icon={<Crown className="size-4" aria-hidden="true" />}
            onClick={() => {
              if (!confirmAction(`Make ${member.name} the owner of ${site.name}? You stay on as admin.`)) return;
              transfer.mutate(member.user_id, { onError: fail('Failed to transfer the ownership') });
            }}
          >
            Transfer ownership
          </Button>
        ) : null}
        {isOwner && !isYou ? (
          <Button
            size="sm"
            variant="danger-ghost"
            loading={remove.isPending}
            icon={<Trash2 className="size-4" aria-hidden="true" />}
            onClick={() => {
              if (!confirmAction(`Remove ${member.name} from ${site.name}?`)) return;
              remove.mutate(member.user_id, { onError: fail('Failed to remove the member') });
            }}
          >
            Remove
          </Button>
        ) : null}
        {isYou && !onlyOwner ? (
          <Button
            size="sm"
            variant="danger-ghost"
            loading={leave.isPending}
            icon={<LogOut className="size-4" aria-hidden="true" />}
            onClick={() => {
              if (!confirmAction(`Leave ${site.name}? You lose access until someone invites you again.`)) return;
              leave.mutate(site.id, { onSuccess: () => void navigate('/dashboard'), onError: fail('Failed to leave the site') });
            }}
          >
            Leave site
          </Button>
        ) : null}
      </div>
    </li>
  );
}

/** Settings → Members: who works on the site and with which role; owners invite, change roles and remove. */
export function MembersPanel({ site }: { site: Site }) {
  const query = useMembersQuery(site.id);
  const userId = useAuthStore((s) => s.user?.id);
  const revoke = useRevokeInvitationMutation(site.id);

  if (query.isPending) {
    return (
      <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
        <Spinner /> Loading members...
      </p>
    );
  }
  if (query.isError) return <Alert tone="error">{errorMessage(query.error, 'Failed to load members')}</Alert>;
  const { members, invitations, your_role: yourRole } = query.data;

  return (
    <div className="flex flex-col gap-6">
      <Card>
        <CardHeader>
          <CardTitle>
            <span className="inline-flex items-center gap-2">
              <Users className="size-5 text-slate-500" aria-hidden="true" /> Members
            </span>
          </CardTitle>
          <CardDescription>
            Your role on {site.name}: <strong>{ROLE_LABELS[yourRole]}</strong>. {yourRole === 'owner' ? 'You can invite people, change roles and remove members.' : 'Only owners manage members.'}
          </CardDescription>
        </CardHeader>
        <CardContent>
          <ul className="divide-y divide-slate-200" aria-label="Members">
            {members.map((member) => (
              <MemberRow
                key={member.user_id}
                site={site}
                member={member}
                yourRole={yourRole}
                isYou={member.user_id === userId}
                onlyOwner={member.role === 'owner' && members.filter((m) => m.role === 'owner').length === 1}
              />
            ))}
          </ul>
        </CardContent>
      </Card>

      {yourRole === 'owner' ? (
        <Card>
          <CardHeader>
            <CardTitle>Invite someone</CardTitle>
            <CardDescription>People without an account set their name and password from the link; people with one accept after signing in.</CardDescription>
          </CardHeader>
          <CardContent className="flex flex-col gap-6">
            <InviteForm site={site} />
            {invitations.length > 0 ? (
              <section aria-labelledby="pending-invitations">
                <h3 id="pending-invitations" className="mb-2 text-sm font-semibold text-slate-900">
                  Pending invitations
                </h3>
                <ul className="divide-y divide-slate-200">
                  {invitations.map((invitation) => (
                    <li key={invitation.id} className="flex flex-col gap-2 py-2 sm:flex-row sm:items-center" data-testid="invitation-row">
                      <p className="flex min-w-0 flex-1 items-center gap-2 text-sm text-slate-700">
                        <Mail className="size-4 shrink-0 text-slate-400" aria-hidden="true" />
                        <span className="truncate">{invitation.email}</span>
                        <Badge tone="neutral">{ROLE_LABELS[invitation.role]}</Badge>
                      </p>
                      <Button
                        size="sm"
                        variant="danger-ghost"
                        onClick={() => revoke.mutate(invitation.id, { onError: (error) => notify(errorMessage(error, 'Failed to revoke the invitation')) })}
                      >
                        Revoke
                      </Button>
                    </li>
                  ))}
                </ul>
              </section>
            ) : null}
          </CardContent>
        </Card>
      ) : null}

      <Card>
        <CardHeader>
          <CardTitle>Roles</CardTitle>
          <CardDescription>Each role can do everything the ones below it can.</CardDescription>
        </CardHeader>
        <CardContent>
          <RoleList />
        </CardContent>
      </Card>
    </div>
  );
}
