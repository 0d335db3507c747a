import { UPLOAD_MAX_BYTES } from '@herald/contracts';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { deferred, fail, mockApi, ok } from '../../test/fetch-mock';
import { signIn } from '../../test/fixtures';
import { ImagePicker } from './image-picker';

const UPLOAD = 'POST /api/upload/image';

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
  render(<Harness initial={initial} />);
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
    expect(api.calls).toHaveLength(0);
  });

  it('refuses files over 5MB before uploading: "File size must be less than 5MB"', async () => {
    const api = mockApi({ [UPLOAD]: ok({ url: 'https://herald.example/uploads/a.png' }, 201) });
    const user = setUp();
    const input = await chooseUpload(user);

    await user.upload(input, png('big.png', UPLOAD_MAX_BYTES + 1));
    expect(screen.getByRole('alert')).toHaveTextContent('File size must be less than 5MB');
    expect(api.calls).toHaveLength(0);

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
    const init = vi.mocked(fetch).mock.calls[0]?.[1];
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
});
