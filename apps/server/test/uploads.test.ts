import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadedFilesRoutes } from '../src/features/uploads/routes';
import { registerErrorHandler } from '../src/platform/error-handler';
import { DASHBOARD_CSP } from '../src/platform/static-files';
import { createTestApp, type TestApp, type TestUser } from './support/test-app';

// Image upload (spec §5, §7 Upload; docs/security.md "Untrusted content").

const MAX = 5 * 1024 * 1024;
const INVALID_TYPE = 'Please upload a valid image file (JPEG, PNG, GIF, or WebP)';
const TOO_LARGE = 'File size must be less than 5MB';

// ---------------------------------------------------------------------------
// Tiny real images, built byte by byte.

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG of one red pixel (8-bit RGB) claiming `width`×`height`; extra chunks go before IEND. */
function png(width = 1, height = 1, extraChunks: Buffer[] = []): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(Buffer.from([0, 255, 0, 0]))),
    ...extraChunks,
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A 1×1 GIF89a (one white pixel), with an optional comment extension. */
function gif(width = 1, height = 1, comment?: string): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  screen.set([0x80, 0, 0], 4);
  const commentBlock = comment
    ? Buffer.concat([Buffer.from([0x21, 0xfe, Buffer.byteLength(comment)]), Buffer.from(comment, 'latin1'), Buffer.from([0])])
    : Buffer.alloc(0);
  return Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    screen,
    Buffer.from([0xff, 0xff, 0xff, 0, 0, 0]), // global colour table: white, black
    commentBlock,
    Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0]), // image descriptor 1×1
    Buffer.from([0x02, 0x02, 0x44, 0x01, 0x00]), // LZW data: one pixel of colour 0
    Buffer.from([0x3b]),
  ]);
}

/**
 * A baseline JPEG of one 8×8 mid-grey block: a flat quantisation table, a
 * one-code DC table and a one-code AC table, and a scan of "DC diff 0, EOB".
 */
function jpeg(width = 8, height = 8): Buffer {
  const segment = (marker: number, data: number[]) => [0xff, marker, (data.length + 2) >> 8, (data.length + 2) & 0xff, ...data];
  const huffman = (tableClass: number) => [tableClass << 4, 1, ...Array(15).fill(0), 0];
  return Buffer.from([
    0xff, 0xd8,
    ...segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]), // JFIF
    ...segment(0xdb, [0, ...Array(64).fill(1)]),
    ...segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]),
    ...segment(0xc4, huffman(0)),
    ...segment(0xc4, huffman(1)),
    ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    0x3f,
    0xff, 0xd9,
  ]);
}

/** Well-known 1×1 WebP files: lossy (VP8), lossless (VP8L) and extended with alpha (VP8X). */
const WEBP = {
  lossy: Buffer.from('UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA', 'base64'),
  lossless: Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64'),
  extended: Buffer.from('UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==', 'base64'),
};

/** A VP8X WebP header claiming a canvas of `width`×`height`. */
function webpCanvas(width: number, height: number): Buffer {
  const bytes = Buffer.from(WEBP.extended);
  bytes.writeUIntLE(width - 1, 24, 3);
  bytes.writeUIntLE(height - 1, 27, 3);
  return bytes;
}

// ---------------------------------------------------------------------------

interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

function multipart(parts: Part[]): { payload: Buffer; contentType: string } {
  const boundary = `----herald-${crypto.randomBytes(8).toString('hex')}`;
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    const type = part.contentType ? `\r\nContent-Type: ${part.contentType}` : '';
    pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`, 'latin1'));
    pieces.push(typeof part.data === 'string' ? Buffer.from(part.data) : part.data);
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}

describe('image upload', () => {
  let t: TestApp;
  let owner: TestUser;
  /** The GET /uploads/<file> plugin on a bare app, with the app-wide headers app.ts adds. */
  let files: FastifyInstance;

  async function upload(data: Buffer | string, options: { filename?: string; contentType?: string; field?: string; token?: string | null } = {}) {
    const body = multipart([
      { name: options.field ?? 'image', filename: options.filename ?? 'picture.png', contentType: options.contentType ?? 'image/png', data },
    ]);
    const token = options.token === undefined ? owner.token : options.token;
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/upload/image',
      headers: { 'content-type': body.contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      payload: body.payload,
    });
    return { status: response.statusCode, body: response.json() };
  }

  async function uploadCount(): Promise<number> {
    const row = await t.ctx.db.selectFrom('uploads').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  function storedFiles(): string[] {
    const dir = path.join(t.dataDir, 'uploads');
    return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
    files = Fastify();
    files.setValidatorCompiler(validatorCompiler);
    files.setSerializerCompiler(serializerCompiler);
    registerErrorHandler(files);
    files.addHook('onSend', async (_request, reply, payload) => {
      void reply.header('x-frame-options', 'DENY').header('content-security-policy', DASHBOARD_CSP);
      return payload;
    });
    await files.register(uploadedFilesRoutes(t.ctx));
    await files.ready();
  });
  afterAll(async () => {
    await files.close();
    await t.close();
  });

  const accepted: Array<[string, () => Buffer, string, string, number, number]> = [
    ['a PNG', () => png(), 'image/png', 'png', 1, 1],
    ['a GIF', () => gif(), 'image/gif', 'gif', 1, 1],
    ['a JPEG', () => jpeg(), 'image/jpeg', 'jpg', 8, 8],
    ['a lossy WebP', () => WEBP.lossy, 'image/webp', 'webp', 1, 1],
    ['a lossless WebP', () => WEBP.lossless, 'image/webp', 'webp', 1, 1],
    ['an extended WebP with alpha', () => WEBP.extended, 'image/webp', 'webp', 1, 1],
    ['a 10,000×4,000 PNG (exactly 40 megapixels)', () => png(10_000, 4_000), 'image/png', 'png', 10_000, 4_000],
  ];
  for (const [name, build, contentType, extension, width, height] of accepted) {
    it(`stores ${name}, records it and serves it back with the detected type`, async () => {
      const bytes = build();
      const response = await upload(bytes);
      expect(response.status).toBe(201);
      expect(response.body.success).toBe(true);
      const url: string = response.body.data.url;
      expect(url).toMatch(new RegExp(`^http://herald\\.test/uploads/[0-9a-f-]{36}\\.${extension}$`));

      const fileName = url.split('/').pop()!;
      expect(fs.readFileSync(path.join(t.dataDir, 'uploads', fileName)).equals(bytes)).toBe(true);
      const row = await t.ctx.db.selectFrom('uploads').selectAll().where('file_name', '=', fileName).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ user_id: owner.id, content_type: contentType, byte_size: bytes.length, width, height, id: fileName.split('.')[0] });

      const served = await files.inject({ method: 'GET', url: new URL(url).pathname });
      expect(served.statusCode).toBe(200);
      expect(served.rawPayload.equals(bytes)).toBe(true);
      expect(served.headers['content-type']).toBe(contentType);
      expect(served.headers['content-length']).toBe(String(bytes.length));
      expect(served.headers['x-content-type-options']).toBe('nosniff');
      expect(served.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
      expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    });
  }

  it('decides the type by the bytes, not the file name or declared type', async () => {
    const response = await upload(jpeg(), { filename: 'photo.png', contentType: 'image/png' });
    expect(response.status).toBe(201);
    expect(response.body.data.url).toMatch(/\.jpg$/);
    const renamed = await upload(png(), { filename: 'notes.txt', contentType: 'text/plain' });
    expect(renamed.status).toBe(201);
    expect(renamed.body.data.url).toMatch(/\.png$/);
  });

  const refused: Array<[string, () => Buffer | string, number, string | RegExp]> = [
    ['an SVG', () => '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="10" height="10"/></svg>', 400, INVALID_TYPE],
    ['an SVG with an XML prolog', () => '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>', 400, INVALID_TYPE],
    ['an HTML page', () => '<!DOCTYPE html><html><script>alert(1)</script></html>', 400, INVALID_TYPE],
    ['a text file named .png', () => 'hello, I am not a picture', 400, INVALID_TYPE],
    ['a PDF', () => '%PDF-1.7\n1 0 obj\n<<>>\nendobj\n', 400, INVALID_TYPE],
    ['a BMP', () => Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]), 400, INVALID_TYPE],
    ['an empty file', () => Buffer.alloc(0), 400, INVALID_TYPE],
    ['a PNG cut off inside its header', () => png().subarray(0, 20), 400, INVALID_TYPE],
    ['a JPEG without a frame header', () => Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x08, 1, 1, 0, 0, 63, 0, 0xff, 0xd9]), 400, INVALID_TYPE],
    ['a PNG of 0×0 pixels', () => png(0, 0), 400, INVALID_TYPE],
    ['HTML hidden in a GIF comment', () => gif(1, 1, '<html><body><script>alert(document.cookie)</script></body></html>'), 400, INVALID_TYPE],
    ['markup in upper case in a GIF', () => gif(1, 1, '<SCRIPT SRC=//evil.example/x.js></SCRIPT>'), 400, INVALID_TYPE],
    ['an SVG inside a PNG text chunk', () => png(1, 1, [pngChunk('tEXt', Buffer.from('Comment\0<svg onload=alert(1)>'))]), 400, INVALID_TYPE],
    ['a PNG over 10,000 px wide', () => png(10_001, 1), 400, /Image dimensions 10001×1 are too large/],
    ['a PNG over 40 megapixels', () => png(8_000, 8_000), 400, /Image dimensions 8000×8000 are too large/],
    ['a JPEG claiming 65,535 px', () => jpeg(65_535, 65_535), 400, /too large/],
    ['a GIF claiming 20,000 px', () => gif(20_000, 10), 400, /too large/],
    ['a WebP canvas of 16,384 px', () => webpCanvas(16_384, 16_384), 400, /too large/],
  ];
  for (const [name, build, status, message] of refused) {
    it(`refuses ${name}`, async () => {
      const before = { rows: await uploadCount(), files: storedFiles().length };
      const response = await upload(build());
      expect(response.status).toBe(status);
      expect(response.body.success).toBe(false);
      if (typeof message === 'string') expect(response.body.error.message).toBe(message);
      else expect(response.body.error.message).toMatch(message);
      expect({ rows: await uploadCount(), files: storedFiles().length }).toEqual(before);
    });
  }

  it('accepts exactly 5 MB and refuses 5 MB + 1 byte', async () => {
    const base = png();
    // A private ancillary chunk pads the PNG to an exact size (12 bytes of chunk framing).
    const padTo = (size: number) => png(1, 1, [pngChunk('heRd', Buffer.alloc(size - base.length - 12, 0x61))]);
    const exact = padTo(MAX);
    expect(exact.length).toBe(MAX);
    const ok = await upload(exact);
    expect(ok.status).toBe(201);

    const before = { rows: await uploadCount(), files: storedFiles().length };
    const over = padTo(MAX + 1);
    expect(over.length).toBe(MAX + 1);
    const refused = await upload(over);
    expect([400, 413]).toContain(refused.status);
    expect(refused.body).toEqual({ success: false, error: { message: TOO_LARGE, code: 'file_too_large' } });
    const far = await upload(Buffer.concat([png(), Buffer.alloc(12 * 1024 * 1024)]));
    expect(far.body.error.message).toBe(TOO_LARGE);
    expect({ rows: await uploadCount(), files: storedFiles().length }).toEqual(before);
  });

  it('requires a session and the multipart field "image"', async () => {
    expect((await upload(png(), { token: null })).status).toBe(401);
    const wrongField = await upload(png(), { field: 'file' });
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.error.message).toMatch(/field "image"/);
    const json = await t.request('POST', '/api/upload/image', { token: owner.token, body: { image: 'data:image/png;base64,AAAA' } });
    expect(json.status).toBe(400);
    expect(json.body.error.message).toMatch(/multipart\/form-data/);
    const noBoundary = await t.app.inject({
      method: 'POST',
      url: '/api/upload/image',
      headers: { 'content-type': 'multipart/form-data', authorization: `Bearer ${owner.token}` },
      payload: 'garbage',
    });
    expect(noBoundary.statusCode).toBe(400);
    expect(noBoundary.json().success).toBe(false);
    const empty = multipart([{ name: 'title', data: 'no file here' }]);
    const noFile = await t.app.inject({
      method: 'POST',
      url: '/api/upload/image',
      headers: { 'content-type': empty.contentType, authorization: `Bearer ${owner.token}` },
      payload: empty.payload,
    });
    expect(noFile.statusCode).toBe(400);
    expect(noFile.json().error.message).toMatch(/No image received/);
  });

  it('serves 404 for unknown names and every traversal attempt', async () => {
    const stored = await upload(png());
    const known = new URL(stored.body.data.url).pathname;
    const id = known.split('/').pop()!.split('.')[0]!;
    fs.writeFileSync(path.join(t.dataDir, 'uploads', 'notes.txt'), 'private');
    const attempts = [
      `/uploads/${crypto.randomUUID()}.png`,
      `/uploads/${id}.svg`,
      `/uploads/${id}.PNG`,
      `/uploads/${id.toUpperCase()}.png`,
      `/uploads/${id}.png.html`,
      '/uploads/notes.txt',
      '/uploads/herald.db',
      '/uploads/../herald.db',
      '/uploads/..%2Fherald.db',
      '/uploads/..%2F..%2Fetc%2Fpasswd',
      '/uploads/%2e%2e%2fsecret.key',
      '/uploads/..%5csecret.key',
      `/uploads/${id}.png%00.txt`,
      '/uploads/',
    ];
    for (const url of attempts) {
      const response = await files.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body).not.toContain('private');
      expect(String(response.headers['cache-control'] ?? ''), url).not.toMatch(/immutable/);
    }
    expect((await files.inject({ method: 'GET', url: known })).statusCode).toBe(200);
    // The dashboard app's catch-all answers 404 for /uploads/ paths it does not serve itself.
    expect((await t.app.inject({ method: 'GET', url: '/uploads/..%2Fherald.db' })).statusCode).toBe(404);
  });

  it('documents the upload route in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/docs/json' })).json();
    const operation = doc.paths['/api/upload/image'].post;
    expect(operation.tags).toEqual(['uploads']);
    expect(Object.keys(operation.responses)).toContain('201');
  });
});
