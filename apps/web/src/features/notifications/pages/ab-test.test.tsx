import type { Notification, Site } from '@herald/contracts';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { makeNotification, makePerformance } from '../../../test/notification-fixtures';

// Issue 14 §2 in the dashboard: the form's "A/B test" card sends `variants`
// (A = the content) and `ab_test`; the notification page shows each
// variant's figures, the test's state, "Not significant yet" or
// "Significant", and "Send this variant to the rest".

const site = makeSite({ id: 'site-1', name: 'Acme Store', url: 'https://shop.acme.example' });
const CREATE = 'POST /api/sites/site-1/notifications';

function setUp(routes: Parameters<typeof mockApi>[0] = {}, sites: Site[] = [site]) {
  signIn();
  return mockApi({ 'GET /api/auth/me': ok({ user: makeUser() }), 'GET /api/sites': ok({ sites }), 'GET /api/sites/site-1/segments': ok({ segments: [] }), ...routes });
}

const created = (call: { body: unknown }) => ok({ notification: makeNotification({ ...(call.body as Partial<Notification>), id: 'new-1', status: 'draft' }) }, 201);
const variantB = { title: 'Last days', message: 'Only until Sunday', destination_url: 'https://shop.acme.example/last', image_url: null };

describe('notification form: A/B test (issue 14 §2)', () => {
  it('sends variant A (the content) and B with a sample test, checks each field, and offers no A/B card for a recurring notification', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    const type = await screen.findByRole('combobox', { name: /Notification Type/ });
    expect(screen.getByTestId('ab-test-card')).toBeInTheDocument();
    await user.selectOptions(type, 'RECURRING');
    expect(screen.queryByTestId('ab-test-card')).not.toBeInTheDocument();
    await user.selectOptions(type, 'ONE_TIME');
    await user.type(screen.getByLabelText(/^Title/), 'Flash sale');
    await user.type(screen.getByLabelText(/^Message/), 'Half price today');
    await user.type(screen.getByLabelText(/^Destination URL/), 'https://shop.acme.example/sale');
    await user.click(screen.getByRole('switch', { name: 'A/B test this notification' }));

    await user.click(screen.getByRole('button', { name: 'Create Notification' }));
    expect(await screen.findAllByText('Each variant needs a title')).not.toHaveLength(0);
    expect(screen.getByText('Destination URL is required')).toBeInTheDocument();
    await user.type(screen.getByLabelText(/^Variant B title/), variantB.title);
    await user.type(screen.getByLabelText(/^Variant B message/), variantB.message);
    await user.type(screen.getByLabelText(/^Variant B destination URL/), variantB.destination_url);
    await user.clear(screen.getByLabelText(/^Sample size/));
    await user.type(screen.getByLabelText(/^Sample size/), '60');
    await user.clear(screen.getByLabelText(/^Decide after/));
    await user.type(screen.getByLabelText(/^Decide after/), '1441');
    await user.click(screen.getByRole('button', { name: 'Create Notification' }));
    expect(await screen.findByText('ab_test.sample_percent must be between 1 and 50')).toBeInTheDocument();
    expect(screen.getByText('ab_test.decide_after_minutes must be between 1 and 1440 (24 hours)')).toBeInTheDocument();
    expect(api.callsTo(CREATE)).toHaveLength(0);

    await user.clear(screen.getByLabelText(/^Sample size/));
    await user.type(screen.getByLabelText(/^Sample size/), '20');
    await user.clear(screen.getByLabelText(/^Decide after/));
    await user.type(screen.getByLabelText(/^Decide after/), '90');
    expect(screen.getByText(/: 1 h 30 min\.$/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add variant C' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Create Notification' }));
    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo(CREATE)[0]?.body).toMatchObject({
      title: 'Flash sale',
      variants: [{ title: 'Flash sale', message: 'Half price today', destination_url: 'https://shop.acme.example/sale', image_url: null }, variantB],
      ab_test: { sample_percent: 20, decide_after_minutes: 90, metric: 'click_rate', decide: 'auto' },
    });
  });

  const withTest = makeNotification({
    id: 'n-1',
    variants: [{ title: 'Flash sale', message: 'Everything is half price until midnight.', destination_url: 'https://shop.acme.example/sale', image_url: null }, variantB],
    ab_test: null,
  });

  it('loads a test that sends every variant to everyone and saves it back with ab_test null', async () => {
    const api = setUp({ 'GET /api/notifications/n-1': ok({ notification: withTest }), 'PATCH /api/notifications/n-1': ok({ notification: withTest }) });
    captureDialogs();
    const { user } = renderApp('/notifications/n-1/edit');
    expect(await screen.findByLabelText(/^Variant B title/)).toHaveValue('Last days');
    expect(screen.getByRole('button', { name: 'Every variant to everyone' })).toHaveAttribute('aria-pressed', 'true');
    expect(screen.queryByLabelText(/^Sample size/)).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));
    await waitFor(() => expect(api.callsTo('PATCH /api/notifications/n-1')).toHaveLength(1));
    expect(api.callsTo('PATCH /api/notifications/n-1')[0]?.body).toMatchObject({ variants: [{ title: 'Flash sale' }, variantB], ab_test: null });
  });

  it('sends variants: null when the test is turned off', async () => {
    const api = setUp({ 'GET /api/notifications/n-1': ok({ notification: withTest }), 'PATCH /api/notifications/n-1': ok({ notification: withTest }) });
    captureDialogs();
    const { user } = renderApp('/notifications/n-1/edit');
    await user.click(await screen.findByRole('switch', { name: 'A/B test this notification' }));
    expect(screen.queryByLabelText(/^Variant B title/)).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));
    await waitFor(() => expect(api.callsTo('PATCH /api/notifications/n-1')).toHaveLength(1));
    expect(api.callsTo('PATCH /api/notifications/n-1')[0]?.body).toMatchObject({ variants: null, ab_test: null });
  });
});

describe('notification page: A/B test report (issue 14 §2)', () => {
  const notification = makeNotification({ id: 'c1', status: 'completed', title: 'Flash sale', sent_at: '2026-02-20T15:00:00.000Z', completed_at: '2026-02-20T15:02:00.000Z' });
  const testing = makePerformance({
    notification_id: 'c1',
    variants: [
      { index: 0, title: 'Flash sale', reach: 100, delivered: 90, clicked: 9, click_rate: 10 },
      { index: 1, title: 'Last days', reach: 100, delivered: 0, clicked: 0, click_rate: 0 },
    ],
    ab_test: { status: 'testing', sample_percent: 20, decide: 'manual', decides_at: null, winner_index: null, decided_at: null, decided_by: null, leader_index: 0, significant: false },
  });

  it('shows each variant’s figures with the click rate’s denominator, "Not significant yet", and sends the picked variant to the rest', async () => {
    const api = setUp({
      'GET /api/notifications/c1': ok({ notification }),
      'GET /api/notifications/c1/performance': ok(testing),
      'POST /api/notifications/c1/ab-test/winner': ok({ ab_test: { ...testing.ab_test!, status: 'decided', winner_index: 0, decided_by: 'manual', decided_at: '2026-02-20T16:00:00.000Z' } }),
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/notifications/c1');
    const rowA = await screen.findByTestId('ab-variant-row-A');
    expect(within(rowA).getByTestId('ab-reach-A')).toHaveTextContent('100');
    expect(within(rowA).getByTestId('ab-delivered-A')).toHaveTextContent('90');
    expect(within(rowA).getByTestId('ab-click-rate-A')).toHaveTextContent('10%');
    expect(within(rowA).getByText('Leading')).toBeInTheDocument();
    // Nothing delivered: no rate, never "0%".
    expect(screen.getByTestId('ab-click-rate-B')).toHaveTextContent('—');
    expect(screen.getByText(/Click rate: clicks ÷ delivered/)).toBeInTheDocument();
    expect(screen.getByTestId('ab-significance')).toHaveTextContent('Not significant yet');
    expect(screen.getByTestId('ab-test-status')).toHaveTextContent('Testing on a 20% sample. Pick the variant the rest of the audience gets.');

    await user.click(within(rowA).getByRole('button', { name: /^Send this variant to the rest/ }));
    expect(dialogs.confirms).toContain('Send variant A ("Flash sale") to the rest of the audience? This cannot be undone.');
    await waitFor(() => expect(api.callsTo('POST /api/notifications/c1/ab-test/winner')).toHaveLength(1));
    expect(api.callsTo('POST /api/notifications/c1/ab-test/winner')[0]?.body).toEqual({ variant_index: 0 });
  });

  it('shows the winner, when and how it was decided, and "Significant"; no pick button; the server’s refusal is shown as it is', async () => {
    const decided = makePerformance({
      notification_id: 'c1',
      variants: testing.variants,
      ab_test: { status: 'decided', sample_percent: 20, decide: 'auto', decides_at: null, winner_index: 1, decided_at: '2026-02-20T16:00:00.000Z', decided_by: 'auto', leader_index: 1, significant: true },
    });
    setUp({ 'GET /api/notifications/c1': ok({ notification }), 'GET /api/notifications/c1/performance': ok(decided) });
    renderApp('/notifications/c1');
    const rowB = await screen.findByTestId('ab-variant-row-B');
    expect(within(rowB).getByText('Winner')).toBeInTheDocument();
    expect(screen.getByTestId('ab-test-status')).toHaveTextContent('Variant B won (best click rate');
    expect(screen.getByTestId('ab-significance')).toHaveTextContent('Variant B’s click rate is ahead of the runner-up’s');
    expect(screen.queryByRole('button', { name: /^Send this variant to the rest/ })).not.toBeInTheDocument();
  });

  it('says why a pick was refused', async () => {
    setUp({
      'GET /api/notifications/c1': ok({ notification }),
      'GET /api/notifications/c1/performance': ok(testing),
      'POST /api/notifications/c1/ab-test/winner': fail(409, 'The winner was already decided: variant B'),
    });
    const dialogs = captureDialogs();
    const { user } = renderApp('/notifications/c1');
    await user.click(within(await screen.findByTestId('ab-variant-row-A')).getByRole('button', { name: /^Send this variant to the rest/ }));
    await waitFor(() => expect(dialogs.alerts).toContain('The winner was already decided: variant B'));
  });
});
