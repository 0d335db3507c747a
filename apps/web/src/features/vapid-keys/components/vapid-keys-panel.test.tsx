import type { VapidKey } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';

// Settings → VAPID Keys (docs/product.md, "VAPID keys"): the site's key pairs
// with their subscribers, import, make primary, retire; admins and owners.

const PRIMARY = 'BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U';
const IMPORTED = 'BA1Hxzyi1RUM1b5wjxsn7nGxAszw2u61m164i3MrAIxHF6YK5h4SDYic-dRuU_RCPCfA5aq9ojSwk5Y2EmClBPs';
const UNUSED = 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4';

const key = (id: string, public_key: string, is_primary: boolean, subscriber_count: number): VapidKey => ({
  id,
  public_key,
  is_primary,
  subscriber_count,
  created_at: '2025-01-01T00:00:00.000Z',
});

function setUp(role: 'owner' | 'editor', extra: Parameters<typeof mockApi>[0] = {}) {
  signIn();
  const site = makeSite({ id: 'site-9', name: 'Acme Store', vapid_public_key: PRIMARY, role });
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites: [site] }),
    'GET /api/sites/site-9/vapid-keys': ok({ keys: [key('k1', PRIMARY, true, 1200), key('k2', IMPORTED, false, 40), key('k3', UNUSED, false, 0)] }),
    ...extra,
  });
}

describe('Settings → VAPID Keys', () => {
  it('lists the keys with their subscribers, the primary badge and the private keys masked', async () => {
    setUp('owner');
    renderApp('/settings?tab=vapid');

    const list = await screen.findByRole('list', { name: 'VAPID keys' });
    const rows = within(list).getAllByRole('listitem');
    expect(rows).toHaveLength(3);
    expect(within(rows[0]!).getByText('Primary')).toBeInTheDocument();
    expect(within(rows[0]!).getByText('1,200 active subscribers')).toBeInTheDocument();
    expect(within(rows[0]!).getByRole('figure', { name: 'VAPID public key' })).toHaveTextContent(PRIMARY);
    expect(within(rows[0]!).queryByRole('button', { name: 'Make primary' })).not.toBeInTheDocument();
    expect(within(rows[1]!).queryByText('Primary')).not.toBeInTheDocument();
    expect(within(rows[1]!).getByText('40 active subscribers')).toBeInTheDocument();
    for (const row of rows) expect(within(row).getByRole('img', { name: 'Private key hidden' })).toHaveTextContent(/^•+$/);
    // A key still in use cannot be retired; an unused one can.
    expect(within(rows[1]!).getByRole('button', { name: 'Retire' })).toBeDisabled();
    expect(within(rows[1]!).getByRole('button', { name: 'Retire' })).toHaveAttribute('title', expect.stringMatching(/Subscribers still use this key/));
    expect(within(rows[2]!).getByRole('button', { name: 'Retire' })).toBeEnabled();
  });

  it('imports a key pair, and shows the server’s reason when it is refused', async () => {
    let attempts = 0;
    const api = setUp('owner', {
      'POST /api/sites/site-9/vapid-keys': () =>
        ++attempts === 1 ? fail(400, 'The private key does not belong to the public key: they are not one key pair') : ok({ key: key('k4', 'BNew', false, 0) }, 201),
    });
    const { user } = renderApp('/settings?tab=vapid');
    await screen.findByRole('list', { name: 'VAPID keys' });

    await user.type(screen.getByRole('textbox', { name: /^Public key/ }), IMPORTED);
    await user.type(screen.getByRole('textbox', { name: /^Private key/ }), 'private-key-text');
    await user.click(screen.getByRole('button', { name: 'Import key pair' }));
    expect(await screen.findByText('The private key does not belong to the public key: they are not one key pair')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Import key pair' }));
    await waitFor(() => expect(api.callsTo('POST /api/sites/site-9/vapid-keys')).toHaveLength(2));
    expect(api.callsTo('POST /api/sites/site-9/vapid-keys')[1]!.body).toEqual({ public_key: IMPORTED, private_key: 'private-key-text' });
    await waitFor(() => expect(screen.getByRole('textbox', { name: /^Private key/ })).toHaveValue(''));
  });

  it('makes a key primary and retires an unused one, each after confirming', async () => {
    const api = setUp('owner', {
      'POST /api/sites/site-9/vapid-keys/k2/primary': ok({ key: key('k2', IMPORTED, true, 40) }),
      'DELETE /api/sites/site-9/vapid-keys/k3': ok({ retired: true }),
    });
    const { user } = renderApp('/settings?tab=vapid');
    const rows = within(await screen.findByRole('list', { name: 'VAPID keys' })).getAllByRole('listitem');

    const declined = captureDialogs(false);
    await user.click(within(rows[1]!).getByRole('button', { name: 'Make primary' }));
    expect(declined.confirms).toEqual([expect.stringMatching(/^Make this key primary\?/)]);
    expect(api.callsTo('POST /api/sites/site-9/vapid-keys/k2/primary')).toHaveLength(0);

    captureDialogs(true);
    await user.click(within(rows[1]!).getByRole('button', { name: 'Make primary' }));
    await waitFor(() => expect(api.callsTo('POST /api/sites/site-9/vapid-keys/k2/primary')).toHaveLength(1));

    const dialogs = captureDialogs(true);
    await user.click(within(rows[2]!).getByRole('button', { name: 'Retire' }));
    expect(dialogs.confirms).toEqual([expect.stringMatching(/^Retire this key\?/)]);
    await waitFor(() => expect(api.callsTo('DELETE /api/sites/site-9/vapid-keys/k3')).toHaveLength(1));
  });

  it('shows an editor the primary key and the import button disabled, saying only admins and owners may manage keys, and never asks for the keys', async () => {
    const api = setUp('editor');
    const { user } = renderApp('/settings?tab=vapid');

    expect(await screen.findByRole('figure', { name: 'VAPID public key' })).toHaveTextContent(PRIMARY);
    const reason = "Editors can't manage VAPID keys";
    const button = screen.getByRole('button', { name: 'Import key pair' });
    expect(button).toBeDisabled();
    expect(button).toHaveAttribute('title', reason);
    await user.click(button);
    expect(screen.getByText(`${reason}: This needs the admin role or higher. Ask an admin or owner of the site if you need to import or rotate a key.`)).toBeInTheDocument();
    expect(api.callsTo('GET /api/sites/site-9/vapid-keys')).toHaveLength(0);
    expect(api.callsTo('POST /api/sites/site-9/vapid-keys')).toHaveLength(0);
  });
});
