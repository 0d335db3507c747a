// Small pieces the dashboard journeys share: the owner's API calls, signing
// in through the login page, a subscriber registered the way Herald's SDK
// registers one, bounded waiting, and a real image to upload.
import zlib from 'node:zlib';
import type { TestSubscription } from '../../apps/server/test/support/push-service';
import type { Page } from './browser';

export type OwnerApi = (method: string, path: string, body?: unknown) => Promise<any>;

/** JSON calls to Herald's /api with the owner's bearer token (once signed in). */
export function ownerApi(baseUrl: string): { call: OwnerApi; signIn(email: string, password: string): Promise<void> } {
  let token = '';
  const call: OwnerApi = async (method, path, body) => {
    const response = await fetch(`${baseUrl}/api${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return response.json();
  };
  return {
    call,
    async signIn(email, password) {
      token = (await call('POST', '/auth/login', { email, password })).data.token;
    },
  };
}

/** Signs in on the login page, as a person would, and waits for the dashboard. */
export async function signInThroughUi(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByTestId('login-submit').click();
  await page.waitForURL('**/dashboard');
}

export const USER_AGENTS = {
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  chromeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
} as const;

/**
 * POST /api/public/sites/{siteId}/subscribers from the site's own origin, as
 * herald.js does after the browser's pushManager.subscribe(); answers the
 * new subscriber's id.
 */
export async function subscribeThroughPublicApi(
  baseUrl: string,
  input: { siteId: string; origin: string; subscription: TestSubscription; userAgent: string; timezone?: string },
): Promise<string> {
  const response = await fetch(`${baseUrl}/api/public/sites/${input.siteId}/subscribers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: input.origin, 'user-agent': input.userAgent },
    body: JSON.stringify({ subscription: { endpoint: input.subscription.endpoint, keys: input.subscription.keys }, timezone: input.timezone ?? 'Europe/Paris', language: 'en' }),
  });
  const body = (await response.json()) as any;
  if (response.status !== 201) throw new Error(`subscribe answered ${response.status}: ${JSON.stringify(body)}`);
  return body.data.subscriber.id;
}

/** Polls `read` every 100 ms until it returns something other than undefined, for at most `timeoutMs`. */
export async function waitUntil<T>(what: string, timeoutMs: number, read: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A real PNG of `size`×`size` pixels in one colour (8-bit RGB), for the upload field. */
export function solidPng(size: number, rgb: [number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => rgb).flat())]);
  const pixels = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', zlib.deflateSync(pixels)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}
