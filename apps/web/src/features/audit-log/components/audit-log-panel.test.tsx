import type { AuditEntry, Site } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { renderApp } from '../../../test/render-app';
import { describeEntry } from './audit-log-panel';

const entry = (overrides: Partial<AuditEntry>): AuditEntry => ({
  id: 'e1',
  at: '2026-05-04T08:00:00.000Z',
  actor: { type: 'user', id: 'user-2', label: 'Eddie Editor <eddie@example.com>' },
  action: 'updated',
  subject: { type: 'notification', id: 'n1', label: 'Spring sale' },
  changed_fields: ['title', 'message'],
  detail: {},
  address: '203.0.113.7',
  ...overrides,
});

function setUp(role: Site['role'], extra: Parameters<typeof mockApi>[0] = {}) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [makeSite({ id: 'site-1', role })] }),
    ...extra,
  });
}

describe('Settings → Audit log', () => {
  it('reads an entry as a sentence', () => {
    expect(describeEntry(entry({}))).toBe('Updated notification “Spring sale” (title, message)');
    expect(describeEntry(entry({ action: 'member_joined', subject: { type: 'member', id: 'u', label: null }, changed_fields: [], detail: { role: 'viewer' } }))).toBe('Joined the site as viewer');
    expect(describeEntry(entry({ action: 'member_invited', subject: { type: 'invitation', id: 'i', label: 'a@b.c' }, changed_fields: [], detail: { email: 'a@b.c', role: 'editor' } }))).toBe(
      'Invited a@b.c as editor',
    );
    expect(describeEntry(entry({ action: 'role_changed', subject: { type: 'member', id: 'u', label: 'Vic <v@x>' }, changed_fields: [], detail: { from: 'viewer', to: 'editor' } }))).toBe(
      'Changed the role of “Vic <v@x>”: viewer → editor',
    );
    expect(describeEntry(entry({ action: 'export_run', subject: { type: 'audit_log', id: null, label: null }, changed_fields: [], detail: { rows: 2 } }))).toBe('Exported the audit log');
    expect(describeEntry(entry({ action: 'export_run', changed_fields: [], detail: { file: 'herald-notification-n1.csv' } }))).toBe('Exported the report of notification “Spring sale”');
    const subscribers = { type: 'subscriber' as const, id: null, label: null };
    expect(describeEntry(entry({ action: 'export_run', subject: subscribers, changed_fields: [], detail: { export: 'subscribers', include_keys: false } }))).toBe('Exported the subscribers');
    expect(describeEntry(entry({ action: 'export_run', subject: subscribers, changed_fields: [], detail: { export: 'subscribers', include_keys: true, is_active: true } }))).toBe(
      'Exported the subscribers with their push keys',
    );
    const one = { type: 'subscriber' as const, id: 'sub-1', label: null };
    expect(describeEntry(entry({ action: 'export_run', subject: one, changed_fields: [], detail: { export: 'subscriber_data' } }))).toBe('Downloaded the data of a subscriber');
    expect(describeEntry(entry({ action: 'deleted', subject: one, changed_fields: [], detail: { erased: true, deliveries: 3, events: 1 } }))).toBe('Erased a subscriber completely');
    expect(describeEntry(entry({ action: 'deleted', subject: one, changed_fields: [], detail: {} }))).toBe('Deleted subscriber');
  });

  it('lists who did what and from where, filters, and loads more with the cursor', async () => {
    let calls = 0;
    const api = setUp('owner', {
      'GET /api/sites/site-1/audit-log': (call) => {
        calls += 1;
        if (call.url.searchParams.get('cursor') === 'next-1') return ok({ entries: [entry({ id: 'e2', action: 'sent', changed_fields: [] })], next_cursor: null });
        return ok({ entries: [entry({})], next_cursor: calls === 1 ? 'next-1' : null });
      },
    });
    const { user } = renderApp('/settings?tab=audit-log');
    const list = await screen.findByRole('list', { name: 'Audit log entries' });
    expect(within(list).getByText('Updated notification “Spring sale” (title, message)')).toBeInTheDocument();
    expect(within(list).getByText('Eddie Editor <eddie@example.com> · 203.0.113.7')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Load more' }));
    expect(await screen.findByText('Sent notification “Spring sale”')).toBeInTheDocument();

    const form = screen.getByRole('form', { name: 'Filter the audit log' });
    await user.type(within(form).getByLabelText(/Who/), 'eddie@example.com');
    await user.selectOptions(within(form).getByLabelText('Action'), 'sent');
    await user.click(within(form).getByRole('button', { name: 'Apply filters' }));
    await waitFor(() => {
      const last = api.callsTo('GET /api/sites/site-1/audit-log').at(-1)!;
      expect(last.url.searchParams.get('actor')).toBe('eddie@example.com');
      expect(last.url.searchParams.get('action')).toBe('sent');
    });
  });

  it('tells an editor the log needs the admin role, without asking the server', async () => {
    const api = setUp('editor');
    renderApp('/settings?tab=audit-log');
    expect(await screen.findByText(/This needs the admin role or higher\./)).toBeInTheDocument();
    expect(api.callsTo('GET /api/sites/site-1/audit-log')).toEqual([]);
  });
});
