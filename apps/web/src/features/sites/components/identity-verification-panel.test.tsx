import type { Site } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, ok, type RecordedCall } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

// Settings → Automation, identity verification (issue 10 item 3; docs/security.md).

const SECRET = '9f'.repeat(32);
const ROTATED = 'a1'.repeat(32);

function setUp(site: Site, extra: Parameters<typeof mockApi>[0] = {}) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-7/events': ok({ events: [] }),
    'GET /api/sites/site-7/identity-secret': ok({ secret: SECRET }),
    'POST /api/sites/site-7/identity-secret/rotate': ok({ secret: ROTATED }),
    'PATCH /api/sites/site-7': (call: RecordedCall) => {
      const changes = (call.body as { settings: Partial<Site['settings']> }).settings;
      return ok({ site: { ...site, settings: { ...site.settings, ...changes } } });
    },
    ...extra,
  });
}

const verifying = makeSite({ id: 'site-7', name: 'Acme Store' });
const unverified = makeSite({ id: 'site-7', name: 'Acme Store', settings: { ...makeSite().settings, identityVerification: false } });

describe('Settings → Automation: identity verification', () => {
  it('warns a site without verification until the owner turns it on', async () => {
    const api = setUp(unverified);
    const { user } = renderApp('/settings?tab=automation');

    expect(await screen.findByText('Identity verification is off for this site')).toBeInTheDocument();
    const toggle = screen.getByRole('switch', { name: 'Require a signed identity hash' });
    expect(toggle).toHaveAttribute('aria-checked', 'false');

    await user.click(toggle);
    await waitFor(() => expect(screen.getByRole('switch', { name: 'Require a signed identity hash' })).toHaveAttribute('aria-checked', 'true'));
    expect(api.callsTo('PATCH /api/sites/site-7').map((call) => call.body)).toEqual([{ settings: { identityVerification: true } }]);
    expect(screen.queryByText('Identity verification is off for this site')).not.toBeInTheDocument();
  });

  it('asks before turning verification off', async () => {
    const api = setUp(verifying);
    const dialogs = captureDialogs(false);
    const { user } = renderApp('/settings?tab=automation');

    const toggle = await screen.findByRole('switch', { name: 'Require a signed identity hash' });
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    expect(screen.queryByText('Identity verification is off for this site')).not.toBeInTheDocument();
    await user.click(toggle);
    expect(dialogs.confirms).toEqual(['Turn off identity verification? Any visitor will be able to claim any user id with herald.identify().']);
    expect(api.callsTo('PATCH /api/sites/site-7')).toHaveLength(0);

    captureDialogs(true);
    await user.click(toggle);
    await waitFor(() => expect(api.callsTo('PATCH /api/sites/site-7').map((call) => call.body)).toEqual([{ settings: { identityVerification: false } }]));
    expect(await screen.findByText('Identity verification is off for this site')).toBeInTheDocument();
  });

  it('keeps the secret hidden until revealed, copies it, and rotates it only after confirming', async () => {
    const api = setUp(verifying);
    const { user } = renderApp('/settings?tab=automation');

    expect(await screen.findByRole('img', { name: 'Identity secret hidden' })).toBeInTheDocument();
    expect(api.callsTo('GET /api/sites/site-7/identity-secret')).toHaveLength(0);

    await user.click(screen.getByRole('button', { name: 'Reveal secret' }));
    const shown = await screen.findByRole('figure', { name: 'Identity secret' });
    expect(shown).toHaveTextContent(SECRET);
    expect(within(shown).getByRole('button', { name: 'Copy Identity secret' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Hide secret' }));
    expect(screen.queryByText(SECRET)).not.toBeInTheDocument();

    const declined = captureDialogs(false);
    await user.click(screen.getByRole('button', { name: 'Rotate secret' }));
    expect(declined.confirms).toEqual([
      'Are you sure you want to rotate the identity secret? Hashes made with the current secret are refused at once: put the new secret on your server right away.',
    ]);
    expect(api.callsTo('POST /api/sites/site-7/identity-secret/rotate')).toHaveLength(0);

    captureDialogs(true);
    await user.click(screen.getByRole('button', { name: 'Rotate secret' }));
    expect(await screen.findByRole('figure', { name: 'Identity secret' })).toHaveTextContent(ROTATED);
    expect(api.callsTo('POST /api/sites/site-7/identity-secret/rotate')).toHaveLength(1);
  });

  it("shows an admin the secret's buttons, the switch and the server-only tags disabled, saying only owners may use them, and never asks for the secret", async () => {
    const api = setUp(makeSite({ id: 'site-7', name: 'Acme Store', role: 'admin' }));
    const { user } = renderApp('/settings?tab=automation');

    expect(await screen.findByRole('img', { name: 'Identity secret hidden' })).toBeInTheDocument();
    const reason = "Admins can't see or rotate the identity secret";
    for (const name of ['Reveal secret', 'Rotate secret']) {
      const button = screen.getByRole('button', { name });
      expect(button).toBeDisabled();
      expect(button).toHaveAttribute('title', reason);
      expect(button).toHaveAccessibleDescription(reason);
      await user.click(button);
    }
    expect(screen.getByText(`${reason}: This needs the owner role. Ask an owner of the site if you need it.`)).toBeInTheDocument();
    expect(api.callsTo('GET /api/sites/site-7/identity-secret')).toHaveLength(0);
    expect(api.callsTo('POST /api/sites/site-7/identity-secret/rotate')).toHaveLength(0);
    // Who may claim a user id is the owner's too: an admin turning verification off could claim anyone's (docs/security.md).
    const rulesReason = "Admins can't change identity verification or server-only tags";
    const verification = screen.getByRole('switch', { name: 'Require a signed identity hash' });
    expect(verification).toBeDisabled();
    expect(verification).toHaveAccessibleDescription(expect.stringContaining(`${rulesReason}: This needs the owner role.`));
    const saveTags = screen.getByRole('button', { name: 'Save tags' });
    expect(saveTags).toBeDisabled();
    expect(saveTags).toHaveAttribute('title', rulesReason);
    expect(screen.getByLabelText(/^Tags the browser may not change/)).toBeDisabled();
    await user.click(verification);
    expect(api.callsTo('PATCH /api/sites/site-7')).toHaveLength(0);
  });

  it('shows how to compute the hash in Node.js, PHP and Python', async () => {
    setUp(verifying);
    const { user } = renderApp('/settings?tab=automation');

    const node = await screen.findByRole('figure', { name: 'Node.js example' });
    expect(node).toHaveTextContent("crypto.createHmac('sha256', process.env.HERALD_IDENTITY_SECRET).update(String(userId)).digest('hex')");
    await user.click(screen.getByRole('tab', { name: 'PHP' }));
    expect(screen.getByRole('figure', { name: 'PHP example' })).toHaveTextContent("hash_hmac('sha256', $userId, getenv('HERALD_IDENTITY_SECRET'))");
    await user.click(screen.getByRole('tab', { name: 'Python' }));
    expect(screen.getByRole('figure', { name: 'Python example' })).toHaveTextContent('hmac.new(secret, str(user_id).encode(), hashlib.sha256).hexdigest()');
    // The browser example passes the hash.
    expect(screen.getByRole('figure', { name: 'Browser example' })).toHaveTextContent("herald.identify('customer-42', identityHashFromYourServer);");
  });

  it('saves the server-only tags, trimmed and without duplicates, and shows the backend call that sets them', async () => {
    const api = setUp(makeSite({ id: 'site-7', settings: { ...makeSite().settings, serverOnlyTags: ['vip'] } }));
    const { user } = renderApp('/settings?tab=automation');

    const input = await screen.findByRole('textbox', { name: 'Tags the browser may not change' });
    expect(input).toHaveValue('vip');
    await user.clear(input);
    await user.type(input, ' plan-pro, vip ,, plan-pro');
    await user.click(screen.getByRole('button', { name: 'Save tags' }));
    await waitFor(() => expect(api.callsTo('PATCH /api/sites/site-7').map((call) => call.body)).toEqual([{ settings: { serverOnlyTags: ['plan-pro', 'vip'] } }]));
    await waitFor(() => expect(input).toHaveValue('plan-pro, vip'));
    expect(screen.getByRole('figure', { name: 'Set tags from your backend' })).toHaveTextContent(`${window.location.origin}/api/v1/sites/site-7/subscribers/tags`);
  });
});
