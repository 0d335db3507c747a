import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, launchChromium, recordDialogs, type BrowserSession, type Page } from './support/browser';
import { startHerald, type HeraldProcess } from './support/herald-server';
import { ownerApi, signInThroughUi } from './support/journey';

// Issue 16's journey, through the dashboard in headless Chromium: an owner
// invites an editor and a viewer from Settings → Members; each joins from the
// emailed link by setting a name and password (public sign-up stays closed);
// the editor writes and sends a notification; the viewer sees Send Now
// disabled with the reason, and the API refuses the viewer's send; the owner
// reads it all in Settings → Audit log and exports it as CSV.

const OWNER = { email: 'owner@example.com', password: 'owner-password', name: 'Olive Owner' };
const EDITOR = { email: 'editor@example.com', name: 'Eddie Editor', password: 'editor-password' };
const VIEWER = { email: 'viewer@example.com', name: 'Vera Viewer', password: 'viewer-password' };
const TITLE = 'Team spring sale';

describe('teams journey: invite an editor and a viewer, the editor sends, the viewer cannot, the owner reads the audit log', () => {
  let herald: HeraldProcess;
  const browsers: BrowserSession[] = [];
  let siteId: string;

  async function newPage(): Promise<{ page: Page; dialogs: string[] }> {
    const browser = await launchChromium();
    browsers.push(browser);
    const page = await browser.context.newPage();
    return { page, dialogs: recordDialogs(page) };
  }

  /** The link of the last invitation mailed to `email` (DATA_DIR/mail: no SMTP here). */
  function invitationLink(email: string): string {
    const mail = herald.mails().filter((text) => text.includes(`To: ${email}`)).at(-1);
    if (!mail) throw new Error(`no mail to ${email}`);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/invitation\?token=[\w%-]+)/.exec(mail)?.[1];
    if (!link) throw new Error(`no invitation link in ${mail}`);
    return link;
  }

  /** Opens the emailed link as a person without an account and joins. */
  async function join(page: Page, person: typeof EDITOR): Promise<void> {
    await page.goto(invitationLink(person.email));
    await page.getByRole('heading', { name: 'You are invited' }).waitFor();
    await page.getByText('Olive Owner invited').waitFor();
    await expectAccessible(page, 'invitation page');
    await page.getByLabel(/^Name/).fill(person.name);
    await page.getByLabel(/^Password/).fill(person.password);
    await page.getByLabel(/^Confirm Password/).fill(person.password);
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await page.waitForURL('**/dashboard');
  }

  beforeAll(async () => {
    herald = await startHerald({ ADMIN_EMAIL: OWNER.email, ADMIN_PASSWORD: OWNER.password, ADMIN_NAME: OWNER.name });
    const owner = ownerApi(herald.url);
    await owner.signIn(OWNER.email, OWNER.password);
    siteId = (await owner.call('POST', '/sites', { name: 'Team Shop', url: 'https://team.example' })).data.site.id;
  });
  afterAll(async () => {
    for (const browser of browsers) await browser.close();
    await herald?.stop();
    herald?.cleanUp();
  });

  it('runs the whole journey', async () => {
    // The owner invites both from Settings → Members.
    const { page: ownerPage } = await newPage();
    await signInThroughUi(ownerPage, herald.url, OWNER.email, OWNER.password);
    await ownerPage.goto(`${herald.url}/settings?tab=members`);
    const inviteForm = ownerPage.getByRole('form', { name: 'Invite a member' });
    for (const [person, role] of [
      [EDITOR, 'editor'],
      [VIEWER, 'viewer'],
    ] as const) {
      await inviteForm.getByLabel(/^Email/).fill(person.email);
      await inviteForm.getByLabel('Role').selectOption(role);
      await inviteForm.getByRole('button', { name: 'Send invitation' }).click();
      await ownerPage.getByText(`Invitation sent to ${person.email}.`).waitFor();
    }
    await expect.poll(() => ownerPage.getByTestId('invitation-row').count()).toBe(2);
    await expectAccessible(ownerPage, 'settings → members');

    // The editor joins and sends.
    const { page: editorPage, dialogs: editorDialogs } = await newPage();
    await join(editorPage, EDITOR);
    await editorPage.goto(`${herald.url}/notifications/new`);
    await editorPage.getByLabel(/^Title/).fill(TITLE);
    await editorPage.getByLabel(/^Message/).fill('Everything is 20% off this week');
    await editorPage.getByLabel(/^Destination URL/).fill('https://team.example/sale');
    await editorPage.getByTestId('save-notification').click();
    await expect.poll(() => editorDialogs).toContain('Notification created successfully!');
    await editorPage.waitForURL('**/notifications');
    await editorPage.getByRole('article', { name: TITLE }).getByRole('button', { name: 'Send Now' }).click();
    await expect.poll(() => editorDialogs).toContain('Notification sent successfully!');

    // The viewer joins and cannot send: the dashboard says why, the API refuses.
    const { page: viewerPage } = await newPage();
    await join(viewerPage, VIEWER);
    await viewerPage.getByText('You are a viewer of Team Shop').waitFor();
    await viewerPage.goto(`${herald.url}/notifications`);
    const newButton = viewerPage.getByRole('button', { name: 'New Notification' }).first();
    expect(await newButton.isDisabled()).toBe(true);
    expect(await newButton.getAttribute('title')).toBe("Viewers can't create notifications");
    await expectAccessible(viewerPage, 'notifications as a viewer');
    // A draft the editor leaves for later: the viewer sees its Send Now disabled.
    const editor = ownerApi(herald.url);
    await editor.signIn(EDITOR.email, EDITOR.password);
    await editor.call('POST', `/sites/${siteId}/notifications`, { title: 'Draft for later', message: 'Not yet', destination_url: 'https://team.example/later' });
    await viewerPage.reload();
    const send = viewerPage.getByRole('article', { name: 'Draft for later' }).getByRole('button', { name: 'Send Now' });
    expect(await send.isDisabled()).toBe(true);
    expect(await send.getAttribute('title')).toBe("Viewers can't send notifications");
    const viewer = ownerApi(herald.url);
    await viewer.signIn(VIEWER.email, VIEWER.password);
    const draftId = (await viewer.call('GET', `/sites/${siteId}/notifications`)).data.notifications.find((n: any) => n.title === 'Draft for later').id;
    const refused = await viewer.call('POST', `/notifications/${draftId}/send`);
    expect(refused).toEqual({ success: false, error: { message: 'This needs the editor role or higher.', code: 'role_required' } });
    expect((await viewer.call('GET', `/notifications/${draftId}`)).data.notification.status).toBe('draft');

    // The owner reads it all in Settings → Audit log.
    await ownerPage.goto(`${herald.url}/settings?tab=audit-log`);
    const entries = ownerPage.getByRole('list', { name: 'Audit log entries' });
    await entries.waitFor();
    const lines = async () => (await entries.getByTestId('audit-entry').allTextContents()).join('\n');
    await expect.poll(lines).toContain(`Sent notification “${TITLE}”`);
    const text = await lines();
    expect(text).toContain(`Created notification “${TITLE}”`);
    expect(text).toContain('Eddie Editor <editor@example.com>');
    expect(text).toMatch(/Joined the site as editorEddie Editor/);
    expect(text).toMatch(/Joined the site as viewerVera Viewer/);
    expect(text).toContain('Invited editor@example.com as editorOlive Owner');
    expect(text).toContain('Invited viewer@example.com as viewerOlive Owner');
    // The viewer's refused send left no trace: one send, by the editor.
    expect(text.split('\n').filter((line) => line.includes('Sent notification'))).toEqual([expect.stringContaining('Eddie Editor')]);
    expect(text.split('\n').filter((line) => line.includes('Vera Viewer'))).toEqual([expect.stringContaining('Joined the site as viewer')]);
    await expectAccessible(ownerPage, 'settings → audit log');

    // Only the editor's entries, then the CSV of them.
    const filters = ownerPage.getByRole('form', { name: 'Filter the audit log' });
    await filters.getByLabel(/^Who/).fill(EDITOR.email);
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => (await entries.getByTestId('audit-entry').allTextContents()).every((line) => line.includes('Eddie Editor'))).toBe(true);
    const download = ownerPage.waitForEvent('download');
    await ownerPage.getByRole('button', { name: 'Export CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('audit-log.csv');
    const csv = fs.readFileSync(await file.path(), 'utf8');
    expect(csv.split('\r\n')[0]).toBe('time,actor,actor_type,action,subject_type,subject,subject_id,changed_fields,detail,address');
    expect(csv).toContain(',Sent,notification,Team spring sale,');
    expect(csv).not.toContain('Vera Viewer');
  });
});
