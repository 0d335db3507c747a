import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app';
import { expectErrorBody, gifWithComment, png, pngOfSize, uploadImage } from './support/fixtures';

// docs/security.md, "Untrusted content" › "Uploads": the type is decided by the
// bytes, 5 MB is the limit to the byte, absurd dimensions and markup-bearing
// files are refused, and whatever is served is an inert image.

const INVALID_TYPE = 'Please upload a valid image file (JPEG, PNG, GIF, or WebP)';
const TOO_LARGE = 'File size must be less than 5MB';
const MAX = 5 * 1024 * 1024;

describe('hostile uploads', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.createUser();
  });
  afterAll(async () => t?.close());

  const storedFiles = () => {
    const dir = path.join(t.dataDir, 'uploads');
    return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  };

  it('refuses SVG, HTML-in-GIF polyglots and anything whose bytes are not an image, whatever its name and type say', async () => {
    const svg = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.domain)"><script>alert(1)</script></svg>';
    const cases: Array<[string, Buffer | string, { filename: string; contentType: string }]> = [
      ['SVG as SVG', svg, { filename: 'logo.svg', contentType: 'image/svg+xml' }],
      ['SVG named .png', svg, { filename: 'logo.png', contentType: 'image/png' }],
      ['SVG behind a UTF-8 BOM', `\ufeff${svg}`, { filename: 'logo.jpg', contentType: 'image/jpeg' }],
      ['HTML named .gif', '<!doctype html><script>alert(1)</script>', { filename: 'x.gif', contentType: 'image/gif' }],
      ['GIF with <script> in a comment', gifWithComment('<script>alert(document.cookie)</script>'), { filename: 'x.gif', contentType: 'image/gif' }],
      ['GIF with an HTML page in a comment', gifWithComment('<html><body onload=alert(1)>'), { filename: 'x.gif', contentType: 'image/gif' }],
      ['GIF header then an iframe', Buffer.concat([gifWithComment(''), Buffer.from('<iframe src=javascript:alert(1)>')]), { filename: 'x.gif', contentType: 'image/gif' }],
      ['PNG carrying PHP', Buffer.concat([png(), Buffer.from('<?php system($_GET["c"]); ?>')]), { filename: 'x.png', contentType: 'image/png' }],
      ['PDF named .jpg', '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj', { filename: 'x.jpg', contentType: 'image/jpeg' }],
      ['ELF named .webp', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, ...Array(56).fill(0)]), { filename: 'x.webp', contentType: 'image/webp' }],
      ['a PNG signature and nothing else', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), { filename: 'x.png', contentType: 'image/png' }],
      ['BMP (not an accepted type)', Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]), { filename: 'x.bmp', contentType: 'image/bmp' }],
      ['empty file', Buffer.alloc(0), { filename: 'x.png', contentType: 'image/png' }],
    ];
    for (const [label, data, options] of cases) {
      const response = await uploadImage(t.app, owner.token, data, options);
      expect(response.status, label).toBe(400);
      expectErrorBody(response.body, label);
      expect(response.body.error.message, label).toBe(INVALID_TYPE);
    }
    expect(storedFiles()).toEqual([]);
  });

  it('accepts exactly 5 MB and refuses 5 MB + 1 byte', async () => {
    const exact = pngOfSize(MAX);
    expect(exact.length).toBe(MAX);
    const accepted = await uploadImage(t.app, owner.token, exact);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    const over = pngOfSize(MAX + 1);
    const refused = await uploadImage(t.app, owner.token, over);
    expect(refused.status).toBe(413);
    expect(refused.body.error.message).toBe(TOO_LARGE);
    expect(storedFiles()).toHaveLength(1);
  });

  it('refuses absurd pixel dimensions before anyone decodes them', async () => {
    for (const [width, height] of [
      [100_000, 100_000],
      [10_001, 1],
      [1, 10_001],
      [8_000, 8_000], // 64 megapixels
      [0, 0],
      [0xffffffff, 0xffffffff],
    ] as const) {
      const response = await uploadImage(t.app, owner.token, png(width, height));
      expect(response.status, `${width}×${height}`).toBe(400);
      expectErrorBody(response.body, `${width}×${height}`);
    }
    expect((await uploadImage(t.app, owner.token, png(100_000, 100_000))).body.error.message).toBe(
      'Image dimensions 100000×100000 are too large: at most 10,000 pixels a side and 40 megapixels',
    );
  });

  it('serves what it stored as the detected type, with nosniff and a sandboxing CSP, whatever was declared', async () => {
    const declaredGif = await uploadImage(t.app, owner.token, png(), { filename: 'holiday.gif', contentType: 'image/gif' });
    expect(declaredGif.status).toBe(201);
    const gifBytes = gifWithComment('just a comment');
    const declaredHtml = await uploadImage(t.app, owner.token, gifBytes, { filename: 'page.html', contentType: 'text/html' });
    expect(declaredHtml.status).toBe(201);

    for (const [uploaded, type, bytes] of [
      [declaredGif, 'image/png', png()],
      [declaredHtml, 'image/gif', gifBytes],
    ] as const) {
      const url = new URL(uploaded.body.data.url);
      expect(url.pathname).toMatch(type === 'image/png' ? /\.png$/ : /\.gif$/);
      for (const method of ['GET', 'HEAD'] as const) {
        const served = await t.app.inject({ method, url: url.pathname });
        expect(served.statusCode).toBe(200);
        expect(served.headers['content-type']).toBe(type);
        expect(served.headers['x-content-type-options']).toBe('nosniff');
        const csp = String(served.headers['content-security-policy']);
        expect(csp).toContain("default-src 'none'");
        expect(csp).toContain('sandbox');
        if (method === 'GET') expect(served.rawPayload.equals(bytes)).toBe(true);
      }
    }
  });

  it('refuses path traversal and every name it did not issue on /uploads', async () => {
    const uploaded = await uploadImage(t.app, owner.token, png());
    const file = String(uploaded.body.data.url).split('/uploads/')[1]!;
    const secrets = ['SQLite format', fs.readFileSync(path.join(t.dataDir, 'secret.key'), 'utf8').trim(), 'root:'];
    const probes = [
      '/uploads/../herald.db',
      '/uploads/..%2fherald.db',
      '/uploads/%2e%2e%2fherald.db',
      '/uploads/%2e%2e/secret.key',
      '/uploads/..%2fsecret.key',
      '/uploads/..%5csecret.key',
      '/uploads/..%252fsecret.key',
      '/uploads/%c0%ae%c0%ae%2fsecret.key',
      '/uploads/....//secret.key',
      '/uploads/%2Fetc%2Fpasswd',
      '/uploads//etc/passwd',
      '/uploads/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd',
      `/uploads/${file}/..%2f..%2fsecret.key`,
      `/uploads/${file}%00.html`,
      `/uploads/${file}.html`,
      `/uploads/${file.toUpperCase()}`,
      `/uploads/${file.replace('.png', '.gif')}`,
      `/uploads/${crypto.randomUUID()}.png`,
      '/uploads/',
      '/uploads/secret.key',
      '/uploads/herald.db',
    ];
    for (const url of probes) {
      const response = await t.app.inject({ method: 'GET', url });
      expect([400, 404], `${url} → ${response.statusCode}`).toContain(response.statusCode);
      for (const secret of secrets) expect(response.body, url).not.toContain(secret);
    }
    // The issued name still works.
    expect((await t.app.inject({ method: 'GET', url: `/uploads/${file}` })).statusCode).toBe(200);
  });

  it('refuses uploads without a session', async () => {
    const anonymous = await uploadImage(t.app, null, png());
    expect(anonymous.status).toBe(401);
    const forged = await uploadImage(t.app, crypto.randomBytes(32).toString('base64url'), png());
    expect(forged.status).toBe(401);
  });
});
