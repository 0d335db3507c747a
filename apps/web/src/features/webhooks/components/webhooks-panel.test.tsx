import type { Site, Webhook, WebhookAttempt } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

const site = makeSite({ id: 'site-1', name: 'Acme Store', settings: { ...makeSite().settings, timezone: 'Europe/Paris' } });
const existing: Webhook = { id: 'wh-1', url: 'https://acme.example/hooks/herald', events: ['subscriber.created', 'notification.completed'], created_at: '2026-03-01T08:00:00.000Z' };
const SECRET = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I=';
const attempt = (overrides: Partial<WebhookAttempt>): WebhookAttempt => ({
  id: 'a-1',
  message_id: 'msg_1',
  event_type: 'subscriber.created',
  attempt: 1,
  attempted_at: '2026-03-05T17:30:00.000Z',
  status_code: 200,
  error: null,
  delivery_status: 'delivered',
  next_attempt_at: null,
  ...overrides,
});

function setUp(hooks: Webhook[], extra: Parameters<typeof mockApi>[0] = {}, sites: Site[] = [site]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites }),
    'GET /api/sites/site-1/webhooks': ok({ webhooks: hooks }),
    ...extra,
  });
}

describe('Settings → Webhooks', () => {
  it('is a tab of Settings, linkable with ?tab=webhooks, listing each webhook with its events', async () => {
    setUp([existing]);
    const { user, router } = renderApp('/settings');
    await user.click(await screen.findByRole('tab', { name: 'Webhooks' }));
    expect(router.state.location.search).toBe('?tab=webhooks');
    const list = await screen.findByRole('list', { name: 'Webhooks' });
    const row = within(list).getAllByRole('listitem')[0]!;
    expect(row).toHaveTextContent('https://acme.example/hooks/herald');
    expect(row).toHaveTextContent('subscriber.created');
    expect(row).toHaveTextContent('notification.completed');
    expect(row).toHaveTextContent('Added Mar 1, 2026, 9:00 AM');
  });

  it('adds a webhook with the chosen events, shows the secret once with a copy button and a warning, then hides it for good', async () => {
    const api = setUp([], {
      'POST /api/sites/site-1/webhooks': (call) => {
        const body = call.body as { url: string; events: string[] };
        return ok({ webhook: { id: 'wh-2', url: body.url, events: body.events, created_at: '2026-03-06T10:00:00.000Z', secret: SECRET } }, 201);
      },
    });
    const { user } = renderApp('/settings?tab=webhooks');

    await user.click(await screen.findByRole('button', { name: 'Add webhook' }));
    expect(await screen.findByText('Must be a complete URL starting with https:// or http://')).toBeInTheDocument();
    expect(screen.getByText('Choose at least one event')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/webhooks')).toHaveLength(0);

    await user.type(screen.getByLabelText(/^Endpoint URL/), 'https://acme.example/hooks/new');
    await user.click(screen.getByRole('checkbox', { name: /notification\.clicked/ }));
    await user.click(screen.getByRole('checkbox', { name: /subscriber\.removed/ }));
    await user.click(screen.getByRole('button', { name: 'Add webhook' }));

    const notice = await screen.findByRole('region', { name: /Signing secret of the webhook/ });
    expect(api.callsTo('POST /api/sites/site-1/webhooks')[0]?.body).toEqual({ url: 'https://acme.example/hooks/new', events: ['subscriber.removed', 'notification.clicked'] });
    expect(within(notice).getByText(SECRET)).toBeInTheDocument();
    expect(within(notice).getByText('Copy this secret now: it will not be shown again')).toBeInTheDocument();
    await user.click(within(notice).getByRole('button', { name: 'Copy Webhook signing secret' }));
    expect(await navigator.clipboard.readText()).toBe(SECRET);
    expect(within(screen.getByRole('list', { name: 'Webhooks' })).getByText('https://acme.example/hooks/new')).toBeInTheDocument();

    await user.click(within(notice).getByRole('button', { name: 'I have copied the secret' }));
    expect(document.body.textContent).not.toContain(SECRET);
  });

  it('shows the server message when adding fails', async () => {
    setUp([], { 'POST /api/sites/site-1/webhooks': fail(409, 'A site can have at most 10 webhooks; delete one you no longer use first') });
    const { user } = renderApp('/settings?tab=webhooks');
    await user.type(await screen.findByLabelText(/^Endpoint URL/), 'https://acme.example/hooks/11');
    await user.click(screen.getByRole('checkbox', { name: /subscriber\.created/ }));
    await user.click(screen.getByRole('button', { name: 'Add webhook' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('A site can have at most 10 webhooks');
  });

  it('deletes a webhook only after confirming', async () => {
    const api = setUp([existing], { 'DELETE /api/webhooks/wh-1': ok({ deleted: true }) });
    const declined = captureDialogs(false);
    const { user } = renderApp('/settings?tab=webhooks');
    await user.click(await screen.findByRole('button', { name: 'Delete the webhook to https://acme.example/hooks/herald' }));
    expect(declined.confirms).toEqual(['Delete the webhook to https://acme.example/hooks/herald? Its pending events and delivery log are deleted too.']);
    expect(api.callsTo('DELETE /api/webhooks/wh-1')).toHaveLength(0);

    captureDialogs(true);
    await user.click(screen.getByRole('button', { name: 'Delete the webhook to https://acme.example/hooks/herald' }));
    await waitFor(() => expect(screen.queryByText('https://acme.example/hooks/herald')).not.toBeInTheDocument());
    expect(api.callsTo('DELETE /api/webhooks/wh-1')).toHaveLength(1);
    expect(await screen.findByRole('heading', { name: 'No webhooks yet' })).toBeInTheDocument();
  });

  it('sends a test event and shows the answer; the delivery log lists attempts with their status codes', async () => {
    let log: WebhookAttempt[] = [attempt({ id: 'a-0', status_code: 503, error: 'The endpoint answered 503', attempt: 2, delivery_status: 'pending', next_attempt_at: '2026-03-05T18:00:00.000Z' })];
    const api = setUp([existing], {
      'POST /api/webhooks/wh-1/test': () => {
        const tested = attempt({ id: 'a-9', event_type: 'webhook.test', status_code: 204, attempted_at: '2026-03-06T10:00:00.000Z' });
        log = [tested, ...log];
        return ok({ delivery: tested });
      },
      'GET /api/webhooks/wh-1/deliveries': () => ok({ deliveries: log }),
    });
    const { user } = renderApp('/settings?tab=webhooks');

    await user.click(await screen.findByRole('button', { name: 'Delivery log of https://acme.example/hooks/herald' }));
    const table = await screen.findByRole('table', { name: 'Delivery log of https://acme.example/hooks/herald' });
    expect(within(table).getAllByRole('row')).toHaveLength(2);
    expect(within(table).getAllByRole('row')[1]).toHaveTextContent('subscriber.created');
    expect(within(table).getAllByRole('row')[1]).toHaveTextContent('503');
    expect(within(table).getAllByRole('row')[1]).toHaveTextContent('The endpoint answered 503 (next try Mar 5, 2026, 7:00 PM)');

    await user.click(screen.getByRole('button', { name: 'Send test event to https://acme.example/hooks/herald' }));
    expect(await screen.findByText('Test event delivered: your endpoint answered 204.')).toBeInTheDocument();
    expect(api.callsTo('POST /api/webhooks/wh-1/test')).toHaveLength(1);
    await waitFor(() => expect(within(screen.getByRole('table', { name: /Delivery log/ })).getAllByRole('row')).toHaveLength(3));
    const rows = within(screen.getByRole('table', { name: /Delivery log/ })).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('webhook.test');
    expect(rows[1]).toHaveTextContent('204');
    expect(rows[1]).toHaveTextContent('Delivered');
  });

  it('tells an editor the tab is for admins and owners, and asks nothing of the server', async () => {
    const editorSite = makeSite({ ...site, role: 'editor' });
    const api = setUp([existing], {}, [editorSite]);
    renderApp('/settings?tab=webhooks');
    expect(await screen.findByText(/This needs the admin role or higher/)).toBeInTheDocument();
    expect(api.callsTo('GET /api/sites/site-1/webhooks')).toHaveLength(0);
  });
});
