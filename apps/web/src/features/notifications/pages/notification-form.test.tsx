import type { Notification, Site } from '@herald/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NOTIFICATION_HELP } from '../../../lib/help-texts';
import { fail, mockApi, ok } from '../../../test/fetch-mock';
import { makeSite, makeUser, signIn } from '../../../test/fixtures';
import { captureDialogs, renderApp } from '../../../test/render-app';
import { makeCounts, makeNotification, makePerformance } from '../../../test/notification-fixtures';

// "Now" is fixed (Date only; timers stay real) so schedule rules and
// timezone conversions can be checked by hand: 12:00 UTC is 07:00 in New York.
const NOW = new Date('2026-03-01T12:00:00.000Z');
beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const newYork = makeSite({ id: 'site-1', name: 'Acme Store', url: 'https://shop.acme.example', settings: { ...makeSite().settings, timezone: 'America/New_York' } });
const CREATE = 'POST /api/sites/site-1/notifications';
const SEGMENTS = 'GET /api/sites/site-1/segments';

function setUp(routes: Parameters<typeof mockApi>[0] = {}, sites: Site[] = [newYork]) {
  signIn();
  return mockApi({
    'GET /api/auth/me': ok({ user: makeUser() }),
    'GET /api/sites': ok({ sites }),
    [SEGMENTS]: ok({ segments: [] }),
    ...routes,
  });
}

const created = (call: { body: unknown }) => ok({ notification: makeNotification({ ...(call.body as Partial<Notification>), id: 'new-1', status: 'draft' }) }, 201);

async function fillContent(user: ReturnType<typeof renderApp>['user'], values = { title: 'Flash sale', message: 'Half price today', url: 'https://shop.acme.example/sale' }) {
  await user.type(await screen.findByLabelText(/^Title/), values.title);
  await user.type(screen.getByLabelText(/^Message/), values.message);
  await user.type(screen.getByLabelText(/^Destination URL/), values.url);
}

const setDateTime = (label: RegExp, value: string) => fireEvent.change(screen.getByLabelText(label), { target: { value } });
const save = (user: ReturnType<typeof renderApp>['user'], name = 'Create Notification') => user.click(screen.getByRole('button', { name }));

describe('notification form: fields and validation (spec §2, §5)', () => {
  it('offers the three types, All Subscribers plus the site’s segments, and the counters', async () => {
    const api = setUp({ [SEGMENTS]: ok({ segments: [{ id: 'seg-1', name: 'VIP buyers', estimated_count: 1200 }] }) });
    const { user } = renderApp('/notifications/new');

    const type = await screen.findByRole('combobox', { name: /Notification Type/ });
    expect([...(type as HTMLSelectElement).options].map((o) => o.value)).toEqual(['ONE_TIME', 'RECURRING', 'TRIGGERED']);
    const segment = screen.getByRole('combobox', { name: 'Target Segment' });
    await waitFor(() => expect([...(segment as HTMLSelectElement).options].map((o) => o.textContent)).toEqual(['All Subscribers', 'VIP buyers (1,200)']));
    expect(api.callsTo(SEGMENTS)).toHaveLength(1);

    expect(screen.getByTestId('title-counter')).toHaveTextContent('0/50');
    expect(screen.getByTestId('message-counter')).toHaveTextContent('0/150');
    await user.type(screen.getByLabelText(/^Title/), 'Hello');
    await user.type(screen.getByLabelText(/^Message/), 'Hi there');
    expect(screen.getByTestId('title-counter')).toHaveTextContent('5/50');
    expect(screen.getByTestId('message-counter')).toHaveTextContent('8/150');
    expect(screen.getByLabelText(/^Destination URL/)).toHaveAttribute('type', 'url');
    expect(screen.getByLabelText(/^Destination URL/)).toBeRequired();
  });

  it('says when the segments could not be loaded, and still offers All Subscribers', async () => {
    setUp({ [SEGMENTS]: fail(503, 'Database is busy') });
    renderApp('/notifications/new');

    const segment = await screen.findByRole('combobox', { name: 'Target Segment' });
    await waitFor(() => expect(segment).toHaveAccessibleDescription('Segments could not be loaded: Database is busy.'), { timeout: 5000 });
    expect([...(segment as HTMLSelectElement).options].map((o) => o.textContent)).toEqual(['All Subscribers']);
  });

  it.each([
    ['RECURRING', 'RECURRING'],
    ['TRIGGERED', 'TRIGGERED'],
    ['one_time', 'ONE_TIME'],
    ['recurring', 'RECURRING'],
    ['WEEKLY', 'ONE_TIME'],
  ])('starts with the type a link asks for: ?type=%s → %s', async (asked, shown) => {
    setUp();
    renderApp(`/notifications/new?type=${asked}`);
    expect(await screen.findByRole('combobox', { name: /Notification Type/ })).toHaveValue(shown);
    // The type's own section is the one shown.
    expect(screen.queryByLabelText(/^Start Date & Time/) !== null).toBe(shown === 'RECURRING');
    expect(screen.queryByLabelText(/^Schedule Time/) !== null).toBe(shown === 'ONE_TIME');
  });

  it('the dashboard\'s "+ New" recurring link sends a recurring notification without choosing the type again', async () => {
    const api = setUp({ [CREATE]: created });
    const dialogs = captureDialogs();
    const { user } = renderApp('/notifications/new?type=RECURRING');
    await fillContent(user);
    setDateTime(/^Start Date & Time/, '2026-03-02T09:00');
    await save(user);
    await waitFor(() => expect(api.callsTo(CREATE)).toHaveLength(1));
    expect(api.callsTo(CREATE)[0]?.body).toMatchObject({ type: 'RECURRING', recurring_schedule: { interval_type: 'DAILY', interval_value: 1, start_date: '2026-03-02T09:00', end_date: null } });
    await waitFor(() => expect(dialogs.alerts).toEqual(['Notification created successfully!']));
  });

  it('requires title, message and destination URL, and sends nothing until they are valid', async () => {
    const api = setUp({ [CREATE]: created });
    const { user } = renderApp('/notifications/new');

    await screen.findByLabelText(/^Title/);
    await save(user);
    expect(await screen.findByText('Title is required')).toBeInTheDocument();
    expect(screen.getByText('Message is required')).toBeInTheDocument();
    expect(screen.getByText('Destination URL is required')).toBeInTheDocument();

    await user.type(screen.getByLabelText(/^Title/), 'x'.repeat(51));
    await user.type(screen.getByLabelText(/^Message/), 'y'.repeat(151));
    await user.type(screen.getByLabelText(/^Destination URL/), 'javascript:alert(1)');
    expect(screen.getByTestId('title-counter')).toHaveTextContent('51/50');
    expect(screen.getByTestId('message-counter')).toHaveTextContent('151/150');
    await save(user);
    expect(await screen.findByText('Title must be at most 50 characters')).toBeInTheDocument();
    expect(screen.getByText('Message must be at most 150 characters')).toBeInTheDocument();
    expect(screen.getByText('Must be a complete URL starting with https:// or http://')).toBeInTheDocument();
    expect(screen.getByLabelText(/^Title/)).toBeInvalid();
    expect(api.callsTo(CREATE)).toHaveLength(0);
  });

  it('checks the schedule time against now in the site’s timezone (future, at most 30 days ahead)', async () => {
    const api = setUp({ [CREATE]: created });
    const { user } = renderApp('/notifications/new');
    await fillContent(user);

    const schedule = screen.getByLabelText('Schedule Time (America/New_York)');
    expect(schedule).toHaveAttribute('type', 'datetime-local');
    expect(schedule).toHaveAccessibleDescription('Leave empty to save as draft, or schedule for a specific time');
    expect(schedule).toHaveAttribute('min', '2026-03-01T07:00');
    expect(schedule).toHaveAttribute('max', '2026-03-31T08:00');

    setDateTime(/^Schedule Time/, '2026-03-01T06:30');
    await save(user);
    expect(await screen.findByText('Schedule time must be in the future')).toBeInTheDocument();
    setDateTime(/^Schedule Time/, '2026-04-15T09:00');
    expect(await screen.findByText('Notifications can be scheduled up to 30 days ahead')).toBeInTheDocument();
    expect(api.callsTo(CREATE)).toHaveLength(0);
  });

  it('recurring: start date required, every-N a whole number of at least 1, end after start', async () => {
    const api = setUp({ [CREATE]: created });
    const { user } = renderApp('/notifications/new');
    await fillContent(user);

    await user.selectOptions(screen.getByRole('combobox', { name: /Notification Type/ }), 'RECURRING');
    expect(screen.queryByLabelText(/^Schedule Time/)).not.toBeInTheDocument();
    expect([...(screen.getByRole('combobox', { name: 'Repeat' }) as HTMLSelectElement).options].map((o) => o.value)).toEqual(['DAILY', 'WEEKLY', 'MONTHLY']);
    expect(screen.getByLabelText(/^End Date & Time/)).toHaveAccessibleDescription('Leave empty to continue indefinitely');
    const every = screen.getByRole('spinbutton', { name: /Repeat Every/ });
    expect(every).toHaveAttribute('min', '1');

    await user.clear(every);
    await user.type(every, '0');
    await save(user);
    expect(await screen.findByText('Repeat every must be at least 1')).toBeInTheDocument();
    expect(screen.getByText('Start date is required')).toBeInTheDocument();

    await user.clear(every);
    await user.type(every, '1.5');
    expect(await screen.findByText('Repeat every must be a whole number')).toBeInTheDocument();

    setDateTime(/^Start Date & Time/, '2026-03-02T09:00');
    setDateTime(/^End Date & Time/, '2026-03-02T08:00');
    expect(await screen.findByText('End date must be after the start date')).toBeInTheDocument();
    expect(api.callsTo(CREATE)).toHaveLength(0);
  });

  it('every field explains itself in a tooltip (spec §2 Help Center: notification help texts)', async () => {
    setUp();
    const { user } = renderApp('/notifications/new');
    await screen.findByRole('textbox', { name: /^Title/ });
    const about = (field: string) => screen.getByRole('button', { name: `About ${field}` });
    expect(about('Notification Type')).toHaveAccessibleDescription(NOTIFICATION_HELP.type);
    expect(about('Target Segment')).toHaveAccessibleDescription(NOTIFICATION_HELP.segment);
    expect(about('Title')).toHaveAccessibleDescription(NOTIFICATION_HELP.title);
    expect(about('Message')).toHaveAccessibleDescription(NOTIFICATION_HELP.message);
    expect(about('Destination URL')).toHaveAccessibleDescription(NOTIFICATION_HELP.destinationUrl);
    expect(about('Large Image')).toHaveAccessibleDescription(NOTIFICATION_HELP.largeImage);
    expect(about('Action Buttons')).toHaveAccessibleDescription(NOTIFICATION_HELP.actionButtons);
    expect(about('Schedule Time (America/New_York)')).toHaveAccessibleDescription(NOTIFICATION_HELP.scheduledAt);

    await user.selectOptions(screen.getByRole('combobox', { name: /Notification Type/ }), 'RECURRING');
    expect(about('Repeat')).toHaveAccessibleDescription(NOTIFICATION_HELP.recurringInterval);
    expect(about('Repeat Every')).toHaveAccessibleDescription(NOTIFICATION_HELP.recurringEvery);
    expect(about('Start Date & Time (America/New_York)')).toHaveAccessibleDescription(NOTIFICATION_HELP.recurringStart);
    expect(about('End Date & Time (America/New_York)')).toHaveAccessibleDescription(NOTIFICATION_HELP.recurringEnd);

    await user.selectOptions(screen.getByRole('combobox', { name: /Notification Type/ }), 'TRIGGERED');
    expect(about('Event Name')).toHaveAccessibleDescription(NOTIFICATION_HELP.triggered);
  });

  it('triggered: explains the Automation section and checks the event name and delay', async () => {
    const api = setUp({ [CREATE]: created });
    const { user } = renderApp('/notifications/new');
    await fillContent(user);

    await user.selectOptions(screen.getByRole('combobox', { name: /Notification Type/ }), 'TRIGGERED');
    const automationLink = screen.getByRole('link', { name: 'Automation section' });
    expect(automationLink).toHaveAttribute('href', '/settings?tab=automation');
    expect(automationLink.closest('[role="status"]')).toHaveTextContent(
      'Triggered notifications are sent automatically when the events configured in the Automation section happen.',
    );
    await save(user);
    expect(await screen.findByText('Event name is required')).toBeInTheDocument();

    await user.type(screen.getByLabelText(/^Event Name/), 'cart abandoned!');
    await user.clear(screen.getByLabelText(/^Delay \(minutes\)/));
    await user.type(screen.getByLabelText(/^Delay \(minutes\)/), '-5');
    expect(await screen.findByText('Event name may contain letters, digits, _ . : and - only')).toBeInTheDocument();
    expect(screen.getByText('Delay must be a whole number of minutes')).toBeInTheDocument();
    expect(api.callsTo(CREATE)).toHaveLength(0);
  });

  it('action buttons: up to two, each with text and a complete URL', async () => {
    const api = setUp({ [CREATE]: created });
    const { user } = renderApp('/notifications/new');
    await fillContent(user);

    const toggle = screen.getByRole('switch', { name: 'Action Buttons' });
    expect(toggle).toHaveAttribute('aria-checked', 'false');
    await user.click(toggle);
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByLabelText('Button 1 Text')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Add Button' }));
    expect(screen.getByLabelText('Button 2 Text')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Add Button' })).not.toBeInTheDocument();
    expect(screen.getByText(/At most 2 action buttons/)).toBeInTheDocument();

    await user.type(screen.getByLabelText('Button 1 URL'), 'not a url');
    await save(user);
    expect(await screen.findAllByText('Button text is required')).toHaveLength(2);
    expect(screen.getByText('Must be a complete URL starting with https:// or http://')).toBeInTheDocument();
    expect(screen.getByText('Button URL is required')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Remove button 2' }));
    expect(screen.queryByLabelText('Button 2 Text')).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add Button' })).toBeInTheDocument();
    expect(api.callsTo(CREATE)).toHaveLength(0);
  });
});

describe('notification form: what it sends (spec §3)', () => {
  it('one-time with segment, icon, large image, two action buttons and a schedule time (sent as typed, in the site’s timezone)', async () => {
    const api = setUp({ [CREATE]: created, [SEGMENTS]: ok({ segments: [{ id: 'seg-1', name: 'VIP buyers', estimated_count: 3 }] }) });
    const dialogs = captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);

    await user.selectOptions(await screen.findByRole('combobox', { name: 'Target Segment' }), await screen.findByRole('option', { name: /VIP buyers/ }));
    await user.type(screen.getByLabelText('Icon URL'), 'https://cdn.acme.example/icon.png');
    await user.click(screen.getByRole('switch', { name: 'Large Image' }));
    await user.type(screen.getByLabelText('Large Image URL'), 'https://cdn.acme.example/banner.png');
    await user.click(screen.getByRole('switch', { name: 'Action Buttons' }));
    await user.type(screen.getByLabelText('Button 1 Text'), 'Shop now');
    await user.type(screen.getByLabelText('Button 1 URL'), 'https://shop.acme.example/shop');
    await user.click(screen.getByRole('button', { name: 'Add Button' }));
    await user.type(screen.getByLabelText('Button 2 Text'), 'Later');
    await user.type(screen.getByLabelText('Button 2 URL'), 'https://shop.acme.example/later');
    setDateTime(/^Schedule Time/, '2026-03-05T09:30');
    await save(user);

    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(dialogs.alerts).toEqual(['Notification created successfully!']);
    expect(api.callsTo(CREATE)[0]?.body).toEqual({
      type: 'ONE_TIME',
      title: 'Flash sale',
      message: 'Half price today',
      destination_url: 'https://shop.acme.example/sale',
      icon_url: 'https://cdn.acme.example/icon.png',
      image_url: 'https://cdn.acme.example/banner.png',
      segment_id: 'seg-1',
      status: 'DRAFT',
      scheduled_at: '2026-03-05T09:30',
      actions: [
        { title: 'Shop now', url: 'https://shop.acme.example/shop' },
        { title: 'Later', url: 'https://shop.acme.example/later' },
      ],
    });
  });

  it('one-time draft: nulls for what is empty, and a large image typed then switched off is not sent', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);

    await user.click(screen.getByRole('switch', { name: 'Large Image' }));
    await user.type(screen.getByLabelText('Large Image URL'), 'https://cdn.acme.example/banner.png');
    await user.click(screen.getByRole('switch', { name: 'Large Image' }));
    expect(screen.queryByLabelText('Large Image URL')).not.toBeInTheDocument();
    await user.click(screen.getByRole('switch', { name: 'Action Buttons' }));
    await user.type(screen.getByLabelText('Button 1 Text'), 'Ignored');
    await user.click(screen.getByRole('switch', { name: 'Action Buttons' }));
    await save(user);

    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo(CREATE)[0]?.body).toEqual({
      type: 'ONE_TIME',
      title: 'Flash sale',
      message: 'Half price today',
      destination_url: 'https://shop.acme.example/sale',
      icon_url: null,
      image_url: null,
      segment_id: null,
      status: 'DRAFT',
      scheduled_at: null,
      actions: [],
    });
  });

  it('recurring: recurring_schedule {interval_type, interval_value (integer), start_date, end_date|null}', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);

    await user.selectOptions(screen.getByRole('combobox', { name: /Notification Type/ }), 'RECURRING');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Repeat' }), 'WEEKLY');
    const every = screen.getByRole('spinbutton', { name: /Repeat Every/ });
    await user.clear(every);
    await user.type(every, '2');
    expect(screen.getByText('weeks')).toBeInTheDocument();
    setDateTime(/^Start Date & Time/, '2026-03-02T09:00');
    await save(user);

    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo(CREATE)[0]?.body).toEqual({
      type: 'RECURRING',
      title: 'Flash sale',
      message: 'Half price today',
      destination_url: 'https://shop.acme.example/sale',
      icon_url: null,
      image_url: null,
      segment_id: null,
      status: 'DRAFT',
      scheduled_at: null,
      actions: [],
      recurring_schedule: { interval_type: 'WEEKLY', interval_value: 2, start_date: '2026-03-02T09:00', end_date: null },
    });
  });

  it('recurring with an end date sends it as typed', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);

    await user.selectOptions(screen.getByRole('combobox', { name: /Notification Type/ }), 'RECURRING');
    setDateTime(/^Start Date & Time/, '2026-03-02T09:00');
    setDateTime(/^End Date & Time/, '2026-06-30T18:00');
    await save(user);

    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect((api.callsTo(CREATE)[0]?.body as { recurring_schedule: unknown }).recurring_schedule).toEqual({
      interval_type: 'DAILY',
      interval_value: 1,
      start_date: '2026-03-02T09:00',
      end_date: '2026-06-30T18:00',
    });
  });

  it('triggered: trigger {event, delay_minutes}', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);

    await user.selectOptions(screen.getByRole('combobox', { name: /Notification Type/ }), 'TRIGGERED');
    await user.type(screen.getByLabelText(/^Event Name/), 'cart_abandoned');
    await user.clear(screen.getByLabelText(/^Delay \(minutes\)/));
    await user.type(screen.getByLabelText(/^Delay \(minutes\)/), '30');
    await save(user);

    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo(CREATE)[0]?.body).toEqual({
      type: 'TRIGGERED',
      title: 'Flash sale',
      message: 'Half price today',
      destination_url: 'https://shop.acme.example/sale',
      icon_url: null,
      image_url: null,
      segment_id: null,
      status: 'DRAFT',
      scheduled_at: null,
      actions: [],
      trigger: { event: 'cart_abandoned', delay_minutes: 30 },
    });
  });

  it('an uploaded icon is sent as icon_url', async () => {
    const api = setUp({ [CREATE]: created, 'POST /api/upload/image': ok({ url: 'https://herald.example/uploads/abc.png' }, 201) });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);

    const picker = screen.getByRole('group', { name: 'Icon' });
    await user.click(within(picker).getByRole('button', { name: 'Upload file' }));
    await user.upload(within(picker).getByLabelText('Upload Icon'), new File(['png'], 'icon.png', { type: 'image/png' }));
    expect(await within(picker).findByTestId('image-picker-current-link')).toHaveTextContent('https://herald.example/uploads/abc.png');
    await save(user);

    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect((api.callsTo(CREATE)[0]?.body as { icon_url: string }).icon_url).toBe('https://herald.example/uploads/abc.png');
  });

  it("alerts the server's message, else \"Failed to create notification\", and stays on the form", async () => {
    setUp({ [CREATE]: fail(400, 'RECURRING notifications are not available on this server yet') });
    const dialogs = captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);

    await save(user);
    await waitFor(() => expect(dialogs.alerts).toEqual(['RECURRING notifications are not available on this server yet']));
    mockApi({ [CREATE]: { status: 502, text: '<html>Bad gateway</html>' }, [SEGMENTS]: ok({ segments: [] }) });
    await save(user);
    await waitFor(() => expect(dialogs.alerts[1]).toBe('Failed to create notification'));
    expect(pathname()).toBe('/notifications/new');
  });

  it('without a site: "Please select a site"', async () => {
    const api = setUp({}, []);
    const dialogs = captureDialogs();
    const { user } = renderApp('/notifications/new');
    await fillContent(user);

    await save(user);
    expect(dialogs.alerts).toEqual(['Please select a site']);
    expect(api.calls.filter((c) => c.method === 'POST')).toHaveLength(0);
    expect(api.callsTo(SEGMENTS)).toHaveLength(0);
  });
});

describe('notification form: reach, Schedule and Send Now (issue 11)', () => {
  const AUDIENCE = 'GET /api/sites/site-1/audience';
  const audience = (counts: Record<string, number>) => (call: { url: URL }) => {
    const segment = call.url.searchParams.get('segment_id');
    return ok({ count: counts[segment ?? 'all'] ?? 0, segment_id: segment });
  };

  it('shows whom it would reach: All Subscribers (N), the segment’s count, "Will reach N subscribers", and a warning for nobody', async () => {
    setUp({ [SEGMENTS]: ok({ segments: [{ id: 'seg-1', name: 'Nobody yet', estimated_count: 0 }] }), [AUDIENCE]: audience({ all: 1234, 'seg-1': 0 }) });
    const { user } = renderApp('/notifications/new');

    const segment = await screen.findByRole('combobox', { name: 'Target Segment' });
    await waitFor(() => expect([...(segment as HTMLSelectElement).options].map((o) => o.textContent)).toEqual(['All Subscribers (1,234)', 'Nobody yet (0)']));
    expect(await screen.findByTestId('reach')).toHaveTextContent('Will reach 1,234 subscribers');
    await user.selectOptions(segment, 'seg-1');
    await waitFor(() => expect(screen.getByTestId('reach')).toHaveTextContent('Will reach 0 subscribers: nobody would get it now.'));
  });

  it('a target of nobody asks before saving', async () => {
    const api = setUp({ [SEGMENTS]: ok({ segments: [{ id: 'seg-1', name: 'Nobody yet', estimated_count: 0 }] }), [AUDIENCE]: audience({ all: 3, 'seg-1': 0 }), [CREATE]: created });
    const dialogs = captureDialogs(false);
    const { user } = renderApp('/notifications/new');
    await fillContent(user);
    await user.selectOptions(screen.getByRole('combobox', { name: 'Target Segment' }), 'seg-1');
    await screen.findByText(/nobody would get it now/);

    await save(user);
    expect(dialogs.confirms).toEqual(['This notification would reach 0 subscribers right now. Save it anyway?']);
    expect(api.callsTo(CREATE)).toHaveLength(0);
  });

  it('Send Now asks the spec’s question, creates the draft, sends it, alerts "Notification sent successfully!" and opens it', async () => {
    const api = setUp({
      [AUDIENCE]: audience({ all: 3 }),
      [CREATE]: created,
      'POST /api/notifications/new-1/send': ok({ notification: makeNotification({ id: 'new-1', status: 'sending' }) }),
      'GET /api/notifications/new-1': ok({ notification: makeNotification({ id: 'new-1', status: 'sending', title: 'Flash sale' }) }),
      'GET /api/notifications/new-1/performance': ok(makePerformance({ notification_id: 'new-1' })),
    });
    const dialogs = captureDialogs(true);
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);
    // A time typed for later does not hold back a send now.
    setDateTime(/^Schedule Time/, '2026-03-02T09:00');

    await user.click(screen.getByRole('button', { name: 'Send Now' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Notification sent successfully!']));
    expect(dialogs.confirms).toEqual(['Are you sure you want to send this notification?']);
    expect(api.callsTo(CREATE)[0]!.body).toMatchObject({ title: 'Flash sale', status: 'DRAFT', scheduled_at: null });
    expect(api.callsTo('POST /api/notifications/new-1/send')).toHaveLength(1);
    await waitFor(() => expect(pathname()).toBe('/notifications/new-1'));
  });

  it('Send Now answered "Cancel" sends nothing', async () => {
    const api = setUp({ [AUDIENCE]: audience({ all: 3 }), [CREATE]: created });
    const dialogs = captureDialogs(false);
    const { user } = renderApp('/notifications/new');
    await fillContent(user);
    await user.click(screen.getByRole('button', { name: 'Send Now' }));
    expect(dialogs.confirms).toEqual(['Are you sure you want to send this notification?']);
    expect(api.calls.filter((c) => c.method === 'POST')).toHaveLength(0);
  });

  it('Schedule needs a time, then saves the notification scheduled', async () => {
    const api = setUp({ [AUDIENCE]: audience({ all: 3 }), [CREATE]: created });
    const dialogs = captureDialogs(true);
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);

    await user.click(screen.getByRole('button', { name: 'Schedule' }));
    expect(await screen.findByText('Pick a time to schedule it for')).toBeInTheDocument();
    expect(api.callsTo(CREATE)).toHaveLength(0);

    setDateTime(/^Schedule Time/, '2026-03-02T09:00');
    await user.click(screen.getByRole('button', { name: 'Schedule' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['Notification created successfully!']));
    expect(api.callsTo(CREATE)[0]!.body).toMatchObject({ scheduled_at: '2026-03-02T09:00' });
    await waitFor(() => expect(pathname()).toBe('/notifications'));
  });

  it('offers Schedule and Send Now for one-time notifications only', async () => {
    setUp({ [AUDIENCE]: audience({ all: 3 }) });
    const { user } = renderApp('/notifications/new');
    expect(await screen.findByRole('button', { name: 'Send Now' })).toBeInTheDocument();
    await user.selectOptions(screen.getByRole('combobox', { name: /Notification Type/ }), 'RECURRING');
    expect(screen.queryByRole('button', { name: 'Send Now' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Schedule' })).not.toBeInTheDocument();
  });
});

describe('notification form: live preview (spec §2)', () => {
  it('shows placeholders, then the typed text (as text, never HTML) and the destination URL’s host in four styles', async () => {
    setUp();
    const { user } = renderApp('/notifications/new');
    const preview = await screen.findByTestId('notification-preview');

    expect(within(preview).getByText('Notification Title')).toBeInTheDocument();
    expect(within(preview).getByText('Your notification message will appear here.')).toBeInTheDocument();
    // No destination yet: the site's own host.
    expect(within(preview).getByTestId('preview-host')).toHaveTextContent('shop.acme.example');

    await user.type(screen.getByLabelText(/^Title/), '<b>Big</b> news');
    await user.type(screen.getByLabelText(/^Message/), '<img src=x onerror=alert(1)>');
    await user.type(screen.getByLabelText(/^Destination URL/), 'https://blog.acme.example:8443/post/1?utm=x');

    expect(within(preview).getByText('<b>Big</b> news')).toBeInTheDocument();
    expect(within(preview).getByText('<img src=x onerror=alert(1)>')).toBeInTheDocument();
    expect(preview.querySelector('b')).toBeNull();
    expect(within(preview).getByTestId('preview-host')).toHaveTextContent(/^blog\.acme\.example:8443$/);

    const styles = within(preview).getByRole('group', { name: 'Preview style' });
    expect(within(styles).getAllByRole('button').map((b) => b.textContent)).toEqual(['Chrome · Windows', 'Chrome · macOS', 'Firefox · Android', 'Safari · iOS']);
    for (const [button, figure] of [
      ['Chrome · macOS', 'Chrome on macOS preview'],
      ['Firefox · Android', 'Firefox on Android preview'],
      ['Safari · iOS', 'Safari on iOS preview'],
      ['Chrome · Windows', 'Chrome on Windows preview'],
    ] as const) {
      await user.click(within(styles).getByRole('button', { name: button }));
      const shown = within(preview).getByRole('figure', { name: figure });
      expect(shown).toHaveTextContent('<b>Big</b> news');
      expect(within(shown).getByTestId('preview-host')).toHaveTextContent('blog.acme.example:8443');
    }
  });

  it('shows the action buttons and the large image in the Windows style', async () => {
    setUp();
    const { user } = renderApp('/notifications/new');
    const preview = await screen.findByTestId('notification-preview');

    await user.click(screen.getByRole('switch', { name: 'Action Buttons' }));
    await user.type(screen.getByLabelText('Button 1 Text'), 'Shop now');
    expect(within(preview).getByText('Shop now')).toBeInTheDocument();
    await user.click(screen.getByRole('switch', { name: 'Large Image' }));
    await user.type(screen.getByLabelText('Large Image URL'), 'https://cdn.acme.example/banner.png');
    expect(preview.querySelector('img[src="https://cdn.acme.example/banner.png"]')).not.toBeNull();
  });
});

describe('notification form: edit mode (spec §2 /notifications/{id}/edit)', () => {
  const scheduled = makeNotification({
    id: 'n-1',
    status: 'scheduled',
    title: 'Weekend promo',
    message: 'Two days only',
    destination_url: 'https://shop.acme.example/weekend',
    icon_url: 'https://cdn.acme.example/icon.png',
    image_url: 'https://cdn.acme.example/banner.png',
    segment_id: 'seg-1',
    actions: [{ title: 'Shop', url: 'https://shop.acme.example/shop' }],
    scheduled_at: '2026-03-05T14:30:00.000Z',
  });

  it('loads the values, shows scheduled_at in the site’s timezone, and saves with PATCH', async () => {
    const api = setUp({
      'GET /api/notifications/n-1': ok({ notification: scheduled }),
      [SEGMENTS]: ok({ segments: [{ id: 'seg-1', name: 'VIP buyers', estimated_count: 3 }] }),
      'PATCH /api/notifications/n-1': (call) => ok({ notification: { ...scheduled, title: (call.body as { title: string }).title } }),
    });
    const dialogs = captureDialogs();
    const { user, pathname } = renderApp('/notifications/n-1/edit');

    const title = await screen.findByLabelText(/^Title/);
    expect(title).toHaveValue('Weekend promo');
    expect(screen.getByLabelText(/^Message/)).toHaveValue('Two days only');
    expect(screen.getByLabelText(/^Destination URL/)).toHaveValue('https://shop.acme.example/weekend');
    expect(screen.getByLabelText('Icon URL')).toHaveValue('https://cdn.acme.example/icon.png');
    expect(screen.getByRole('switch', { name: 'Large Image' })).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByLabelText('Large Image URL')).toHaveValue('https://cdn.acme.example/banner.png');
    expect(screen.getByRole('switch', { name: 'Action Buttons' })).toHaveAttribute('aria-checked', 'true');
    expect(screen.getByLabelText('Button 1 Text')).toHaveValue('Shop');
    // 14:30 UTC is 09:30 in New York (EST).
    expect(screen.getByLabelText('Schedule Time (America/New_York)')).toHaveValue('2026-03-05T09:30');
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Target Segment' })).toHaveValue('seg-1'));

    await user.clear(title);
    await user.type(title, 'Weekend promo: extended');
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));

    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(dialogs.alerts).toEqual(['Notification updated successfully!']);
    expect(api.callsTo('PATCH /api/notifications/n-1')[0]?.body).toEqual({
      type: 'ONE_TIME',
      title: 'Weekend promo: extended',
      message: 'Two days only',
      destination_url: 'https://shop.acme.example/weekend',
      icon_url: 'https://cdn.acme.example/icon.png',
      image_url: 'https://cdn.acme.example/banner.png',
      segment_id: 'seg-1',
      status: 'DRAFT',
      scheduled_at: '2026-03-05T09:30',
      actions: [{ title: 'Shop', url: 'https://shop.acme.example/shop' }],
    });
  });

  it('a site in another timezone shows the same instant as its own wall time', async () => {
    const tokyo = makeSite({ id: 'site-1', settings: { ...newYork.settings, timezone: 'Asia/Tokyo' } });
    setUp({ 'GET /api/notifications/n-1': ok({ notification: scheduled }) }, [tokyo]);
    renderApp('/notifications/n-1/edit');

    expect(await screen.findByLabelText('Schedule Time (Asia/Tokyo)')).toHaveValue('2026-03-05T23:30');
  });

  it('a recurring notification loads its schedule', async () => {
    const recurring = makeNotification({
      id: 'n-1',
      type: 'RECURRING',
      recurringSchedule: { intervalType: 'MONTHLY', intervalValue: 3, startDate: '2026-03-10T13:00:00.000Z', endDate: '2026-12-10T14:00:00.000Z', isActive: true, nextRunAt: null },
    });
    setUp({ 'GET /api/notifications/n-1': ok({ notification: recurring }) });
    renderApp('/notifications/n-1/edit');

    expect(await screen.findByRole('combobox', { name: 'Repeat' })).toHaveValue('MONTHLY');
    expect(screen.getByRole('spinbutton', { name: /Repeat Every/ })).toHaveValue(3);
    expect(screen.getByLabelText(/^Start Date & Time/)).toHaveValue('2026-03-10T09:00'); // EDT from March 8
    expect(screen.getByLabelText(/^End Date & Time/)).toHaveValue('2026-12-10T09:00');
  });

  it('alerts the server message, else "Failed to update notification"', async () => {
    setUp({ 'GET /api/notifications/n-1': ok({ notification: scheduled }), 'PATCH /api/notifications/n-1': fail(409, 'This notification is already being sent') });
    const dialogs = captureDialogs();
    const { user } = renderApp('/notifications/n-1/edit');

    await user.click(await screen.findByRole('button', { name: 'Save Changes' }));
    await waitFor(() => expect(dialogs.alerts).toEqual(['This notification is already being sent']));
    mockApi({ 'PATCH /api/notifications/n-1': { status: 500, text: '' } });
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));
    await waitFor(() => expect(dialogs.alerts[1]).toBe('Failed to update notification'));
  });

  it('a missing notification says so', async () => {
    setUp({ 'GET /api/notifications/gone': fail(404, 'Notification not found') });
    renderApp('/notifications/gone/edit');

    expect(await screen.findByRole('heading', { name: 'Notification not found' })).toBeInTheDocument();
  });
});

describe('notification view mode (spec §4: view-only statuses)', () => {
  const completed = makeNotification({
    id: 'c1',
    status: 'completed',
    title: 'Spring launch',
    message: 'New collection is live',
    destination_url: 'https://shop.acme.example/spring',
    actions: [{ title: 'Browse', url: 'https://shop.acme.example/browse' }],
    sent_at: '2026-02-20T15:00:00.000Z',
    completed_at: '2026-02-20T15:02:00.000Z',
  });
  const performance = makePerformance({
    notification_id: 'c1',
    total: 200,
    sent: 175,
    delivered: 160,
    clicked: 12,
    failed: 25,
    click_rate: 7.5,
    delivery_rate: 91.43,
    reach_rate: 80,
    counts: makeCounts({ targeted: 200, sent: 175, failed: 20, expired: 4, skipped: 1, delivered: 160, clicked: 12 }),
    skipped: { inactive: 1, frequency_cap: 0, quiet_hours_deferred: 0 },
  });

  it('shows every field read-only with the performance numbers', async () => {
    const api = setUp({ 'GET /api/notifications/c1': ok({ notification: completed }), 'GET /api/notifications/c1/performance': ok(performance) });
    renderApp('/notifications/c1/edit');

    expect(await screen.findByText('This notification is completed and can no longer be edited.')).toBeInTheDocument();
    expect(screen.queryByRole('form')).not.toBeInTheDocument();
    expect(screen.queryByRole('textbox')).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Save/ })).not.toBeInTheDocument();
    expect(screen.getByRole('heading', { level: 1, name: 'Spring launch' })).toBeInTheDocument();
    expect(screen.getByText('Message').nextSibling).toHaveTextContent('New collection is live');
    expect(screen.getByText('Target Segment').nextSibling).toHaveTextContent('All Subscribers');
    expect(screen.getByText('Action Buttons').nextSibling).toHaveTextContent('Browse');
    expect(screen.getByText('Sent', { selector: 'dt.text-sm' }).nextSibling).toHaveTextContent('Feb 20, 2026, 10:00 AM');

    expect(await screen.findByTestId('performance-sent')).toHaveTextContent('175');
    expect(screen.getByTestId('performance-delivered')).toHaveTextContent('160');
    expect(screen.getByTestId('performance-clicked')).toHaveTextContent('12');
    // The outcome model: failed, expired and skipped apart, adding up to targeted.
    expect(screen.getByTestId('performance-targeted')).toHaveTextContent('200');
    expect(screen.getByTestId('performance-failed')).toHaveTextContent('20');
    expect(screen.getByTestId('performance-expired')).toHaveTextContent('4');
    expect(screen.getByTestId('performance-skipped')).toHaveTextContent('1');
    expect(screen.getByTestId('skipped-causes')).toHaveTextContent('Skipped: 1 had unsubscribed by then');
    expect(screen.getByTestId('performance-pending')).toHaveTextContent('0');
    expect(screen.getByTestId('performance-click-rate')).toHaveTextContent('7.5%');
    expect(screen.getByTestId('performance-delivery-rate')).toHaveTextContent('91.43%');
    // Rates name their denominators; reach sits beside the spec's delivery rate.
    expect(screen.getByTestId('performance-reach-rate')).toHaveTextContent('80%');
    expect(screen.getByText('Click rate = clicks ÷ delivered. Delivery rate = delivered ÷ sent (accepted by the push services). Reach = delivered ÷ targeted.')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Export CSV' })).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'Runs' })).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Duplicate' })).toBeInTheDocument();
    expect(within(screen.getByTestId('notification-preview')).getByText('New collection is live')).toBeInTheDocument();
    expect(api.callsTo('GET /api/notifications/c1/performance')).toHaveLength(1);
  });

  it('shows a rate whose denominator is still 0 as "—", not "0%" (every subscriber at the frequency cap)', async () => {
    // Rates and counts default to 0: four targeted, all four skipped.
    const noneSent = makePerformance({ notification_id: 'c1', total: 4, counts: makeCounts({ targeted: 4, skipped: 4 }), skipped: { inactive: 0, frequency_cap: 4, quiet_hours_deferred: 0 } });
    setUp({ 'GET /api/notifications/c1': ok({ notification: completed }), 'GET /api/notifications/c1/performance': ok(noneSent) });
    renderApp('/notifications/c1/edit');

    expect(await screen.findByTestId('performance-skipped')).toHaveTextContent('4');
    expect(screen.getByTestId('performance-click-rate')).toHaveTextContent('—');
    expect(screen.getByTestId('performance-delivery-rate')).toHaveTextContent('—');
    // Four were targeted, none reached: that is a true 0%.
    expect(screen.getByTestId('performance-reach-rate')).toHaveTextContent('0%');
  });

  it('says how many were skipped for the frequency cap, with the way to the setting', async () => {
    setUp({
      'GET /api/notifications/c1': ok({ notification: completed }),
      'GET /api/notifications/c1/performance': ok({ ...performance, counts: makeCounts({ targeted: 200, sent: 150, skipped: 50 }), skipped: { inactive: 2, frequency_cap: 48, quiet_hours_deferred: 0 } }),
    });
    renderApp('/notifications/c1');
    const line = await screen.findByTestId('skipped-causes');
    expect(line).toHaveTextContent('Skipped: 2 had unsubscribed by then · 48 had already had the frequency cap (Settings → General)');
    expect(within(line).getByRole('link', { name: 'Settings → General' })).toHaveAttribute('href', '/settings');
  });

  it('/notifications/{id} shows a recurring notification’s runs', async () => {
    const recurring = makeNotification({
      id: 'r1',
      type: 'RECURRING',
      status: 'completed',
      recurringSchedule: { intervalType: 'DAILY', intervalValue: 1, startDate: '2026-02-01T14:00:00.000Z', endDate: null, isActive: true, nextRunAt: null },
    });
    const runs = [
      { id: 'run-1', status: 'completed', due_at: '2026-02-01T14:00:00.000Z', started_at: '2026-02-01T14:00:01.000Z', finished_at: '2026-02-01T14:01:00.000Z', last_error: null, stats: { total: 10, sent: 10, delivered: 9, clicked: 3, failed: 0 }, counts: makeCounts({ targeted: 10, sent: 10, delivered: 9, clicked: 3 }) },
      { id: 'run-2', status: 'failed', due_at: '2026-02-02T14:00:00.000Z', started_at: '2026-02-02T14:00:01.000Z', finished_at: '2026-02-02T14:00:05.000Z', last_error: 'Push service unreachable', stats: { total: 10, sent: 0, delivered: 0, clicked: 0, failed: 10 }, counts: makeCounts({ targeted: 10, failed: 10 }) },
    ];
    setUp({ 'GET /api/notifications/r1': ok({ notification: recurring }), 'GET /api/notifications/r1/performance': ok(makePerformance({ notification_id: 'r1', sent: 10, runs })) });
    renderApp('/notifications/r1');

    const table = await screen.findByRole('region', { name: 'Runs' });
    const rows = within(table).getAllByTestId('performance-run');
    expect(rows).toHaveLength(2);
    expect(rows[0]).toHaveTextContent('Feb 1, 2026, 9:00 AM');
    // Run, status, then targeted, sent, delivered, clicked, failed, expired.
    expect(rows[0]).toHaveTextContent(/completed.*10.*10.*9.*3.*0.*0/i);
    expect(rows[1]).toHaveTextContent('Push service unreachable');
    expect(screen.getByText('Schedule').nextSibling).toHaveTextContent('Repeats every 1 day, from Feb 1, 2026, 9:00 AM with no end date');
  });

  it('shows why a failed notification failed, and offers Retry and Duplicate', async () => {
    const failed = makeNotification({ id: 'f1', status: 'failed', last_error: 'The push service refused the VAPID key' });
    setUp({ 'GET /api/notifications/f1': ok({ notification: failed }), 'GET /api/notifications/f1/performance': ok(makePerformance({ notification_id: 'f1' })) });
    renderApp('/notifications/f1');

    expect(await screen.findByTestId('failure-reason')).toHaveTextContent('The push service refused the VAPID key');
    expect(screen.getByRole('button', { name: 'Retry' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Duplicate' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Edit' })).not.toBeInTheDocument();
  });

  it('while sending, shows live progress and polls, then shows the final numbers', async () => {
    const sending = makeNotification({
      id: 'g1',
      status: 'sending',
      stats: { total: 100, sent: 20, delivered: 10, clicked: 1, failed: 0 },
      counts: makeCounts({ targeted: 100, sent: 20, failed: 3, delivered: 10, clicked: 1 }),
    });
    let finished = false;
    const api = setUp({
      'GET /api/notifications/g1': () => {
        const done = api.callsTo('GET /api/notifications/g1').length > 1;
        finished = done;
        return ok({
          notification: done
            ? { ...sending, status: 'completed_with_errors', stats: { total: 100, sent: 98, delivered: 90, clicked: 9, failed: 2 }, counts: makeCounts({ targeted: 100, sent: 98, failed: 2, delivered: 90, clicked: 9 }) }
            : sending,
        });
      },
      'GET /api/notifications/g1/performance': () =>
        ok(
          finished
            ? makePerformance({
                notification_id: 'g1',
                total: 100,
                sent: 98,
                delivered: 90,
                clicked: 9,
                failed: 2,
                click_rate: 10,
                delivery_rate: 91.84,
                counts: makeCounts({ targeted: 100, sent: 98, failed: 2, delivered: 90, clicked: 9 }),
                failures: [{ reason: 'unreachable', push_service: 'fcm', count: 2, sample_error: 'connection: ENOTFOUND fcm.googleapis.com (gave up after 5 attempts)' }],
              })
            : makePerformance({
                notification_id: 'g1',
                total: 100,
                sent: 20,
                delivered: 10,
                clicked: 1,
                click_rate: 10,
                delivery_rate: 50,
                counts: makeCounts({ targeted: 100, sent: 20, failed: 3, delivered: 10, clicked: 1 }),
                retrying: [
                  { reason: 'unreachable', push_service: 'fcm', count: 5, attempt: 2, max_attempts: 5, next_attempt_at: '2026-03-01T10:00:08.000Z', sample_error: 'connection: ENOTFOUND fcm.googleapis.com' },
                ],
              }),
        ),
    });
    renderApp('/notifications/g1');

    // Accepted, failed and pending are separate: a failure is never drawn as sent.
    const progress = await screen.findByTestId('sending-progress');
    expect(progress).toHaveTextContent('20 accepted · 3 failed · 77 pending of 100');
    expect(within(progress).getByRole('progressbar')).toHaveAttribute('aria-valuenow', '23');
    expect(progress.querySelector('[data-segment="sent"]')).toHaveStyle({ width: '20%' });
    expect(progress.querySelector('[data-segment="failed"]')).toHaveStyle({ width: '3%' });
    // Live while retrying: the reason, attempt n of N and the next try.
    const retrying = await screen.findByTestId('retrying');
    expect(retrying).toHaveTextContent('5 · Push service unreachable · Google FCM (Chrome, Edge, Opera): attempt 2 of 5, next try');
    expect(retrying).toHaveTextContent('Herald cannot reach fcm.googleapis.com from this server: check outbound HTTPS (port 443) and DNS.');
    expect(await screen.findByTestId('performance-sent')).toHaveTextContent('20');
    await waitFor(() => expect(screen.queryByTestId('sending-progress')).not.toBeInTheDocument(), { timeout: 4000 });
    await waitFor(() => expect(screen.getByTestId('performance-sent')).toHaveTextContent('98'));
    expect(screen.getByTestId('performance-delivery-rate')).toHaveTextContent('91.84%');
    expect(screen.getByTestId('performance-failed')).toHaveTextContent('2');
    expect(screen.getByText('Completed with errors: 2 of 100 failed (2%)')).toBeInTheDocument();
    const group = screen.getByTestId('failure-group');
    expect(group).toHaveTextContent('2 · Push service unreachable · Google FCM (Chrome, Edge, Opera)');
    expect(group).toHaveTextContent('ENOTFOUND fcm.googleapis.com');
  }, 10_000);

  it('a draft opened at /notifications/{id} is read-only with an Edit link', async () => {
    const draft = makeNotification({ id: 'd1', status: 'draft' });
    setUp({ 'GET /api/notifications/d1': ok({ notification: draft }), 'GET /api/notifications/d1/performance': ok(makePerformance({ notification_id: 'd1' })) });
    renderApp('/notifications/d1');

    expect(await screen.findByRole('link', { name: 'Edit' })).toHaveAttribute('href', '/notifications/d1/edit');
    expect(screen.getByRole('button', { name: 'Send Now' })).toBeInTheDocument();
  });
});

describe('notification form: Send test (issue 12)', () => {
  const testResult = (name = 'Firefox on Linux') => ok({ test: { devices: 1, sent: 1, failed: 0, results: [{ subscriber_id: 'sub-1', name, outcome: 'sent', error: null }] } });

  it('sends the content as typed to the test devices before anything is saved', async () => {
    const api = setUp({ 'POST /api/sites/site-1/notifications/test': testResult() });
    const { user } = renderApp('/notifications/new');
    await fillContent(user);
    await user.click(screen.getByRole('button', { name: 'Send test' }));
    expect(await screen.findByText(/^Test sent to 1 test device\./)).toHaveTextContent('Test sent to 1 test device. Firefox on Linux: sent');
    expect(api.callsTo('POST /api/sites/site-1/notifications/test')[0]?.body).toEqual({
      title: 'Flash sale',
      message: 'Half price today',
      destination_url: 'https://shop.acme.example/sale',
      icon_url: null,
      image_url: null,
      actions: [],
    });
    // Nothing was saved.
    expect(api.callsTo(CREATE)).toEqual([]);
  });

  it('checks the content first and sends nothing while it has errors', async () => {
    const api = setUp({ 'POST /api/sites/site-1/notifications/test': testResult() });
    const { user } = renderApp('/notifications/new');
    await screen.findByLabelText(/^Title/);
    await user.click(screen.getByRole('button', { name: 'Send test' }));
    expect(await screen.findByText('Title is required')).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/notifications/test')).toEqual([]);
  });

  it('sends a saved notification as saved, and the typed content once it is edited', async () => {
    const saved = makeNotification({ id: 'n-1', status: 'draft', title: 'Weekend promo', message: 'Two days only', destination_url: 'https://shop.acme.example/weekend' });
    const api = setUp({
      'GET /api/notifications/n-1': ok({ notification: saved }),
      'POST /api/notifications/n-1/test': testResult(),
      'POST /api/sites/site-1/notifications/test': testResult('Work laptop'),
    });
    const { user } = renderApp('/notifications/n-1/edit');
    const title = await screen.findByLabelText(/^Title/);
    await user.click(screen.getByRole('button', { name: 'Send test' }));
    expect(await screen.findByText(/Firefox on Linux: sent/)).toBeInTheDocument();
    expect(api.callsTo('POST /api/notifications/n-1/test')).toHaveLength(1);
    expect(api.callsTo('POST /api/notifications/n-1/test')[0]?.body).toBeUndefined();

    await user.type(title, ' now');
    await user.click(screen.getByRole('button', { name: 'Send test' }));
    expect(await screen.findByText(/Work laptop: sent/)).toBeInTheDocument();
    expect(api.callsTo('POST /api/sites/site-1/notifications/test')[0]?.body).toMatchObject({ title: 'Weekend promo now' });
  });

  it('shows the server’s reason, e.g. no test device yet', async () => {
    setUp({ 'POST /api/sites/site-1/notifications/test': fail(409, 'This site has no test devices yet.') });
    const { user } = renderApp('/notifications/new');
    await fillContent(user);
    await user.click(screen.getByRole('button', { name: 'Send test' }));
    expect(await screen.findByText('This site has no test devices yet.')).toHaveAttribute('role', 'alert');
  });
});

describe('notification form: delivery options (issue 14 §6)', () => {
  it('sends the chosen time to live, urgency, campaign topic and require interaction; leaves them out while they are the defaults', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);
    expect(screen.getByRole('combobox', { name: 'Time to live' })).toHaveValue('86400');
    expect(screen.getByRole('combobox', { name: 'Urgency' })).toHaveValue('normal');

    await user.selectOptions(screen.getByRole('combobox', { name: 'Time to live' }), '3600');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Urgency' }), 'high');
    await user.click(screen.getByRole('switch', { name: 'Replace the previous notification of this campaign' }));
    await save(user);
    expect(await screen.findByText('Name the campaign, e.g. flash-sale')).toBeInTheDocument();
    await user.type(screen.getByLabelText(/^Campaign name/), 'flash/sale');
    await save(user);
    expect(await screen.findByText('topic may use letters, digits, spaces, dots, dashes and underscores')).toBeInTheDocument();
    await user.clear(screen.getByLabelText(/^Campaign name/));
    await user.type(screen.getByLabelText(/^Campaign name/), 'flash-sale');
    await user.click(screen.getByRole('switch', { name: 'Require interaction' }));
    expect(api.callsTo(CREATE)).toHaveLength(0);
    await save(user);

    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo(CREATE)[0]?.body).toMatchObject({ title: 'Flash sale', ttl_seconds: 3600, urgency: 'high', topic: 'flash-sale', require_interaction: true });
  });

  it('loads the options of a notification, shows a TTL set through the API, and sends the defaults back when they are restored', async () => {
    const withOptions = makeNotification({ id: 'n-1', ttl_seconds: 5400, urgency: 'low', topic: 'stock alerts', require_interaction: true });
    const api = setUp({
      'GET /api/notifications/n-1': ok({ notification: withOptions }),
      'PATCH /api/notifications/n-1': ok({ notification: withOptions }),
    });
    captureDialogs();
    const { user, pathname } = renderApp('/notifications/n-1/edit');
    const ttl = await screen.findByRole('combobox', { name: 'Time to live' });
    expect(ttl).toHaveValue('5400');
    expect(within(ttl).getByRole('option', { name: '5,400 seconds' })).toBeInTheDocument();
    expect(screen.getByRole('combobox', { name: 'Urgency' })).toHaveValue('low');
    expect(screen.getByLabelText(/^Campaign name/)).toHaveValue('stock alerts');
    expect(screen.getByRole('switch', { name: 'Require interaction' })).toHaveAttribute('aria-checked', 'true');

    await user.selectOptions(ttl, '86400');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Urgency' }), 'normal');
    await user.click(screen.getByRole('switch', { name: 'Replace the previous notification of this campaign' }));
    await user.click(screen.getByRole('switch', { name: 'Require interaction' }));
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));
    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo('PATCH /api/notifications/n-1')[0]?.body).toMatchObject({ ttl_seconds: 86_400, urgency: 'normal', topic: null, require_interaction: false });
  });
});

describe('notification form: spread the send (issue 14 §5)', () => {
  it('leaves throttle_per_minute out until "Spread the send" is on; then checks and sends the messages per minute', async () => {
    const api = setUp({ [CREATE]: created });
    captureDialogs();
    const first = renderApp('/notifications/new');
    await fillContent(first.user);
    expect(screen.queryByLabelText(/^Messages per minute/)).not.toBeInTheDocument();
    await save(first.user);
    await waitFor(() => expect(first.pathname()).toBe('/notifications'));
    expect(api.callsTo(CREATE)[0]?.body).not.toHaveProperty('throttle_per_minute');
    first.unmount();

    const { user, pathname } = renderApp('/notifications/new');
    await fillContent(user);
    await user.click(screen.getByRole('switch', { name: 'Spread the send' }));
    const perMinute = screen.getByLabelText(/^Messages per minute/);
    expect(perMinute).toHaveValue('1000');
    await user.clear(perMinute);
    await user.type(perMinute, '0');
    await save(user);
    expect(await screen.findByText('Messages per minute must be at least 1')).toBeInTheDocument();
    await user.clear(perMinute);
    await user.type(perMinute, '2000000');
    await save(user);
    expect(await screen.findByText('Messages per minute must be at most 1,000,000')).toBeInTheDocument();
    await user.clear(perMinute);
    await user.type(perMinute, '600');
    expect(api.callsTo(CREATE)).toHaveLength(1);
    await save(user);
    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo(CREATE)[1]?.body).toMatchObject({ throttle_per_minute: 600 });
  });

  it('loads a throttle, sends null once it is turned off, and offers nothing to spread on a triggered notification', async () => {
    const throttled = makeNotification({ id: 'n-1', throttle_per_minute: 600 });
    const api = setUp({
      'GET /api/notifications/n-1': ok({ notification: throttled }),
      'PATCH /api/notifications/n-1': ok({ notification: throttled }),
    });
    captureDialogs();
    const { user, pathname, unmount } = renderApp('/notifications/n-1/edit');
    expect(await screen.findByLabelText(/^Messages per minute/)).toHaveValue('600');
    await user.click(screen.getByRole('switch', { name: 'Spread the send' }));
    await user.click(screen.getByRole('button', { name: 'Save Changes' }));
    await waitFor(() => expect(pathname()).toBe('/notifications'));
    expect(api.callsTo('PATCH /api/notifications/n-1')[0]?.body).toMatchObject({ throttle_per_minute: null });
    unmount();

    renderApp('/notifications/new?type=TRIGGERED');
    expect(await screen.findByRole('switch', { name: 'Require interaction' })).toBeInTheDocument();
    expect(screen.queryByRole('switch', { name: 'Spread the send' })).not.toBeInTheDocument();
  });
});

describe('notification page: a throttled send in progress (issue 14 §5)', () => {
  it('says when it is expected to finish, as an estimate from what is left and the rate; nothing of the kind once finished or unthrottled', async () => {
    const sentAt = new Date(Date.now() - 60_000).toISOString();
    const throttled = makeNotification({ id: 't1', status: 'sending', throttle_per_minute: 100, sent_at: sentAt, counts: makeCounts({ targeted: 1000, sent: 200 }) });
    setUp({ 'GET /api/notifications/t1': ok({ notification: throttled }), 'GET /api/notifications/t1/performance': ok(makePerformance({ notification_id: 't1' })) });
    const { unmount } = renderApp('/notifications/t1');
    expect(await screen.findByTestId('throttle-estimate')).toHaveTextContent(/^Spread at 100 messages a minute: expected to finish about .+ \(an estimate from the 800 still to send and the rate\)\.$/);
    unmount();

    const plain = makeNotification({ id: 'p1', status: 'sending', sent_at: sentAt, counts: makeCounts({ targeted: 1000, sent: 200 }) });
    setUp({ 'GET /api/notifications/p1': ok({ notification: plain }), 'GET /api/notifications/p1/performance': ok(makePerformance({ notification_id: 'p1' })) });
    renderApp('/notifications/p1');
    expect(await screen.findByTestId('sending-progress')).toBeInTheDocument();
    expect(screen.queryByTestId('throttle-estimate')).not.toBeInTheDocument();
  });
});
