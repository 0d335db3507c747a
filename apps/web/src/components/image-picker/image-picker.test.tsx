import { UPLOAD_MAX_BYTES, type Upload } from '@herald/contracts';
import { QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../lib/query-client';
import { deferred, fail, mockApi, ok } from '../../test/fetch-mock';
import { signIn } from '../../test/fixtures';
import { captureDialogs } from '../../test/render-app';
import { ImagePicker } from './image-picker';

const UPLOAD = 'POST /api/upload/image';
const LIST = 'GET /api/uploads';
const MB = 1024 * 1024;

function Harness({ initial = '' }: { initial?: string }) {
  const [value, setValue] = useState(initial);
  return (
    <>
      <ImagePicker label="Icon" value={value} onChange={setValue} hint="Recommended size: 192x192 pixels (square)." />
      <div data-testid="value">{value}</div>
    </>
  );
}

function setUp(initial?: string) {
  signIn(undefined, 'tok-upload');
  // The picker's own `accept` would hide wrong files from the dialog; these tests hand them over anyway, as drag-and-drop can.
  const user = userEvent.setup({ applyAccept: false });
  render(
    <QueryClientProvider client={queryClient}>
      <Harness initial={initial} />
    </QueryClientProvider>,
  );
  return user;
}

async function chooseUpload(user: ReturnType<typeof userEvent.setup>) {
  await user.click(screen.getByRole('button', { name: 'Upload file' }));
  return screen.getByLabelText('Upload Icon');
}

const png = (name = 'icon.png', bytes = 10) => new File([new Uint8Array(bytes)], name, { type: 'image/png' });

describe('image picker (spec §2, §5, §8)', () => {
  it('toggles between URL entry and file upload, with the recommended size as a hint', async () => {
    const user = setUp();
    const group = screen.getByRole('group', { name: 'Icon' });
    expect(group).toHaveAccessibleDescription('Recommended size: 192x192 pixels (square).');
    expect(screen.getByRole('button', { name: 'Enter URL' })).toHaveAttribute('aria-pressed', 'true');
    expect(screen.getByLabelText('Icon URL')).toHaveAttribute('type', 'url');

    const file = await chooseUpload(user);
    expect(file).toHaveAttribute('type', 'file');
    expect(file.getAttribute('accept')).toContain('image/webp');
    expect(screen.queryByLabelText('Icon URL')).not.toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Enter URL' }));
    expect(screen.getByLabelText('Icon URL')).toBeInTheDocument();
  });

  it('shows the current link and a preview, and hides the preview when the image fails to load', async () => {
    const user = setUp();
    await user.type(screen.getByLabelText('Icon URL'), 'https://cdn.acme.example/icon.png');

    expect(screen.getByTestId('image-picker-current-link')).toHaveAttribute('href', 'https://cdn.acme.example/icon.png');
    const preview = screen.getByRole('img', { name: 'Icon preview' });
    expect(preview).toHaveAttribute('src', 'https://cdn.acme.example/icon.png');
    fireEvent.error(preview);
    expect(screen.queryByRole('img', { name: 'Icon preview' })).not.toBeInTheDocument();
    expect(screen.getByTestId('image-picker-current-link')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Remove icon' }));
    expect(screen.getByTestId('value')).toBeEmptyDOMElement();
    expect(screen.queryByTestId('image-picker-current-link')).not.toBeInTheDocument();
  });

  it('refuses other types before uploading: "Please upload a valid image file (JPEG, PNG, GIF, or WebP)"', async () => {
    const api = mockApi({});
    const user = setUp();
    const input = await chooseUpload(user);

    for (const file of [new File(['<svg/>'], 'logo.svg', { type: 'image/svg+xml' }), new File(['x'], 'notes.txt', { type: 'text/plain' }), new File(['x'], 'photo.bmp', { type: '' })]) {
      await user.upload(input, file);
      expect(screen.getByRole('alert')).toHaveTextContent('Please upload a valid image file (JPEG, PNG, GIF, or WebP)');
    }
    expect(api.callsTo(UPLOAD)).toHaveLength(0);
  });

  it('refuses files over 5MB before uploading: "File size must be less than 5MB"', async () => {
    const api = mockApi({ [UPLOAD]: ok({ url: 'https://herald.example/uploads/a.png' }, 201) });
    const user = setUp();
    const input = await chooseUpload(user);

    await user.upload(input, png('big.png', UPLOAD_MAX_BYTES + 1));
    expect(screen.getByRole('alert')).toHaveTextContent('File size must be less than 5MB');
    expect(api.callsTo(UPLOAD)).toHaveLength(0);

    // Exactly 5MB is allowed; jpg, gif and webp too.
    await user.upload(input, png('max.png', UPLOAD_MAX_BYTES));
    await waitFor(() => expect(api.callsTo(UPLOAD)).toHaveLength(1));
    for (const [name, type] of [['a.jpg', 'image/jpeg'], ['b.jpg', 'image/jpg'], ['c.gif', 'image/gif'], ['d.webp', 'image/webp'], ['e.jpeg', '']]) {
      await user.upload(screen.getByLabelText('Upload Icon'), new File(['x'], name!, { type }));
    }
    await waitFor(() => expect(api.callsTo(UPLOAD)).toHaveLength(6));
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('uploads as multipart field "image" with the session token, shows "Uploading..." meanwhile, then uses data.url', async () => {
    const response = deferred();
    const api = mockApi({ [UPLOAD]: () => response.promise });
    const user = setUp();
    const file = png('logo.png');

    await user.upload(await chooseUpload(user), file);
    expect(screen.getByRole('status')).toHaveTextContent('Uploading logo.png...');
    expect(screen.getByLabelText('Upload Icon')).toBeDisabled();

    const [call] = api.callsTo(UPLOAD);
    expect(call?.headers.get('authorization')).toBe('Bearer tok-upload');
    // The browser sets the multipart boundary itself.
    expect(call?.headers.has('content-type')).toBe(false);
    const init = vi.mocked(fetch).mock.calls.find(([, options]) => options?.method === 'POST')?.[1];
    expect(init?.body).toBeInstanceOf(FormData);
    expect((init?.body as FormData).get('image')).toBe(file);

    response.resolve(ok({ url: 'https://herald.example/uploads/3f1c.png' }, 201));
    await waitFor(() => expect(screen.getByTestId('value')).toHaveTextContent('https://herald.example/uploads/3f1c.png'));
    expect(screen.queryByRole('status')).not.toBeInTheDocument();
    expect(screen.getByTestId('image-picker-current-link')).toHaveTextContent('https://herald.example/uploads/3f1c.png');
    expect(screen.getByRole('img', { name: 'Icon preview' })).toHaveAttribute('src', 'https://herald.example/uploads/3f1c.png');
  });

  it("shows the server's message under the picker, else \"Failed to upload image\"", async () => {
    mockApi({ [UPLOAD]: fail(400, 'Image is too large: at most 10000 pixels a side') });
    const user = setUp('https://cdn.acme.example/old.png');
    const picker = screen.getByRole('group', { name: 'Icon' });

    await user.upload(await chooseUpload(user), png());
    expect(await within(picker).findByRole('alert')).toHaveTextContent('Image is too large: at most 10000 pixels a side');
    // The current image stays.
    expect(screen.getByTestId('value')).toHaveTextContent('https://cdn.acme.example/old.png');
    expect(screen.getByLabelText('Upload Icon')).toHaveAccessibleDescription(/Image is too large/);

    mockApi({ [UPLOAD]: { status: 500, text: '' } });
    await user.upload(screen.getByLabelText('Upload Icon'), png());
    await waitFor(() => expect(within(picker).getByRole('alert')).toHaveTextContent('Failed to upload image'));
  });

  describe('your uploads (GET /api/uploads, DELETE /api/uploads/{id})', () => {
    const makeUpload = (n: number, overrides: Partial<Upload> = {}): Upload => ({
      id: `up-${n}`,
      url: `https://herald.example/uploads/${n}.png`,
      content_type: 'image/png',
      byte_size: 250 * 1024,
      width: 192,
      height: 192,
      created_at: `2026-03-0${n}T10:00:00.000Z`,
      ...overrides,
    });
    const listOf = (uploads: Upload[], used = uploads.reduce((sum, u) => sum + u.byte_size, 0)) =>
      ok({ uploads, total: uploads.length, page: 1, limit: 50, used_bytes: used, quota_bytes: 200 * MB });

    it('shows them in upload mode with the storage used, and "Use" picks one', async () => {
      const api = mockApi({ [LIST]: listOf([makeUpload(2, { width: 1200, height: 628, byte_size: Math.round(1.5 * MB) }), makeUpload(1)]) });
      const user = setUp();
      expect(api.callsTo(LIST)).toHaveLength(0);
      await chooseUpload(user);

      const section = await screen.findByRole('region', { name: 'Your uploads' });
      expect(await within(section).findByText('1.7 MB of 200 MB used')).toBeInTheDocument();
      const use = within(section).getByRole('button', { name: /^Use image 1200×628, 1\.5 MB, uploaded Mar 2, 2026/ });
      expect(use).toHaveAttribute('aria-pressed', 'false');
      await user.click(use);
      expect(screen.getByTestId('value')).toHaveTextContent('https://herald.example/uploads/2.png');
      expect(within(section).getByRole('button', { name: /^Use image 1200×628/ })).toHaveAttribute('aria-pressed', 'true');
      expect(screen.getByRole('img', { name: 'Icon preview' })).toHaveAttribute('src', 'https://herald.example/uploads/2.png');
    });

    it('says when there are none', async () => {
      mockApi({ [LIST]: listOf([]) });
      const user = setUp();
      await chooseUpload(user);
      expect(await screen.findByText('No uploads yet.')).toBeInTheDocument();
      expect(screen.getByText('0 bytes of 200 MB used')).toBeInTheDocument();
    });

    it('deletes one after asking, refreshes the list, and clears the image when it was the chosen one', async () => {
      let uploads = [makeUpload(2), makeUpload(1)];
      const api = mockApi({
        [LIST]: () => listOf(uploads),
        'DELETE /api/uploads/up-2': () => {
          uploads = uploads.filter((u) => u.id !== 'up-2');
          return ok({ deleted: true });
        },
      });
      const dialogs = captureDialogs();
      const user = setUp('https://herald.example/uploads/2.png');
      await chooseUpload(user);
      const section = await screen.findByRole('region', { name: 'Your uploads' });

      await user.click(await within(section).findByRole('button', { name: /^Delete image 192×192, 250 KB, uploaded Mar 2, 2026/ }));
      expect(dialogs.confirms).toEqual(['Delete this image? Notifications already sent with it will show no image.']);
      await waitFor(() => expect(within(section).queryByRole('button', { name: /uploaded Mar 2, 2026/ })).not.toBeInTheDocument());
      expect(api.callsTo('DELETE /api/uploads/up-2')).toHaveLength(1);
      expect(screen.getByTestId('value')).toBeEmptyDOMElement();
      expect(within(section).getByRole('button', { name: /^Use image 192×192, 250 KB, uploaded Mar 1, 2026/ })).toBeInTheDocument();
    });

    it('does nothing when the deletion is not confirmed', async () => {
      const api = mockApi({ [LIST]: listOf([makeUpload(1)]) });
      captureDialogs(false);
      const user = setUp();
      await chooseUpload(user);
      await user.click(await screen.findByRole('button', { name: /^Delete image/ }));
      expect(api.callsTo('DELETE /api/uploads/up-1')).toHaveLength(0);
    });

    it("shows the server's reason under the picker when a deletion is refused, and keeps the image", async () => {
      const reason = 'This image is still used by notification "Summer sale". Remove it there first, then delete it.';
      mockApi({ [LIST]: listOf([makeUpload(1)]), 'DELETE /api/uploads/up-1': fail(409, reason) });
      captureDialogs();
      const user = setUp('https://herald.example/uploads/1.png');
      await chooseUpload(user);
      await user.click(await screen.findByRole('button', { name: /^Delete image/ }));
      expect(await within(screen.getByRole('group', { name: 'Icon' })).findByRole('alert')).toHaveTextContent(reason);
      expect(screen.getByTestId('value')).toHaveTextContent('https://herald.example/uploads/1.png');
    });

    it('shows a new upload in the list once it is stored, and the quota message when it does not fit', async () => {
      let uploads = [makeUpload(1)];
      const api = mockApi({
        [LIST]: () => listOf(uploads),
        [UPLOAD]: () => {
          uploads = [makeUpload(3), ...uploads];
          return ok({ url: 'https://herald.example/uploads/3.png' }, 201);
        },
      });
      const user = setUp();
      const input = await chooseUpload(user);
      await screen.findByRole('button', { name: /^Use image .*uploaded Mar 1, 2026/ });
      await user.upload(input, png());
      expect(await screen.findByRole('button', { name: /^Use image .*uploaded Mar 3, 2026/ })).toHaveAttribute('aria-pressed', 'true');
      expect(api.callsTo(LIST).length).toBeGreaterThanOrEqual(2);

      const full = 'This image does not fit in your upload storage quota of 200 MB (199.9 MB used). Delete some of your uploads to make room.';
      mockApi({ [LIST]: listOf(uploads), [UPLOAD]: fail(413, full) });
      await user.upload(screen.getByLabelText('Upload Icon'), png());
      expect(await within(screen.getByRole('group', { name: 'Icon' })).findByRole('alert')).toHaveTextContent(full);
    });
  });
});
