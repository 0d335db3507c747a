import { describe, expect, it } from 'vitest';
import { MAX_PLAINTEXT_LENGTH } from '../../src/delivery/encryption';
import { createPayloadTemplate, notificationTag, PushPayloadError, PushPayloadTooLargeError } from '../../src/delivery/payload';
import { isValidTopic, pushTopic } from '../../src/delivery/topic';

describe('Topic', () => {
  it('is 32 letters or digits, stable per collapse key, different between keys', () => {
    const ids = ['1', '42', 'c1b3f7a0-5d0e-4b4e-9a51-2f7f1f1c9e10', 'n:7:run:2026-01-01', 'ünïcødé id', 1234];
    const topics = ids.map((id) => pushTopic(id));
    for (const topic of topics) {
      expect(topic).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(isValidTopic(topic)).toBe(true);
    }
    expect(new Set(topics).size).toBe(ids.length);
    expect(pushTopic('42')).toBe(topics[1]);
    expect(pushTopic(1234)).toBe(pushTopic('1234'));
  });

  it('validates the Mozilla-safe alphabet and the RFC 8030 length', () => {
    expect(isValidTopic('a'.repeat(32))).toBe(true);
    expect(isValidTopic('a'.repeat(33))).toBe(false);
    expect(isValidTopic('')).toBe(false);
    expect(isValidTopic('with-dash')).toBe(false); // base64url, but autopush refuses it
    expect(isValidTopic('under_score')).toBe(false);
  });
});

describe('push payload', () => {
  const content = {
    collapseKey: 'n42',
    title: 'Spring sale',
    body: 'Everything 20% off "today" — until midnight',
    url: 'https://shop.example/sale?utm_source=herald',
    icon: 'https://shop.example/icon-192.png',
    image: null,
    actions: [
      { action: 'open', title: 'Shop now', url: 'https://shop.example/sale' },
      { action: 'later', title: 'Later', url: 'https://shop.example/wishlist' },
    ],
  };

  it('builds the service worker JSON with the tag, token and beacon API', () => {
    const bytes = createPayloadTemplate(content, 'https://push.herald.example').render('tok.en-1');
    expect(JSON.parse(bytes.toString('utf8'))).toEqual({
      title: 'Spring sale',
      body: 'Everything 20% off "today" — until midnight',
      url: 'https://shop.example/sale?utm_source=herald',
      icon: 'https://shop.example/icon-192.png',
      image: null,
      tag: notificationTag('n42'),
      token: 'tok.en-1',
      api: 'https://push.herald.example',
      actions: content.actions,
    });
    expect(notificationTag('n42')).toBe('herald-n42');
  });

  it('renders one template per token, leaving out actions when there are none', () => {
    const template = createPayloadTemplate({ ...content, actions: [], icon: undefined }, 'https://push.herald.example');
    const a = JSON.parse(template.render('a').toString());
    const b = JSON.parse(template.render('b"\\\u2028').toString());
    expect(a.token).toBe('a');
    expect(b.token).toBe('b"\\\u2028');
    expect(a).not.toHaveProperty('actions');
    expect(a.icon).toBeNull();
    expect(template.render('').length).toBe(template.baseLength);
  });

  it('refuses a payload that does not fit in one push message, before sending, with the sizes', () => {
    const exact = createPayloadTemplate({ ...content, actions: [], body: '' }, 'https://h.example');
    const room = MAX_PLAINTEXT_LENGTH - exact.baseLength;
    const fits = createPayloadTemplate({ ...content, actions: [], body: 'é'.repeat(Math.floor(room / 2)) }, 'https://h.example');
    expect(fits.render('').length).toBeLessThanOrEqual(MAX_PLAINTEXT_LENGTH);

    expect(() => createPayloadTemplate({ ...content, body: 'x'.repeat(4000) }, 'https://h.example')).toThrow(PushPayloadTooLargeError);
    expect(() => createPayloadTemplate({ ...content, body: 'x'.repeat(4000) }, 'https://h.example')).toThrow(/at most 3993 fit/);
    // The template fits, but not with this token.
    expect(() => exact.render('t'.repeat(room + 1))).toThrow(PushPayloadTooLargeError);
    expect(exact.render('t'.repeat(room)).length).toBe(MAX_PLAINTEXT_LENGTH);
  });

  it('refuses non-http URLs and more than two actions', () => {
    expect(() => createPayloadTemplate({ ...content, url: 'javascript:alert(1)' }, 'https://h.example')).toThrow(PushPayloadError);
    expect(() => createPayloadTemplate({ ...content, icon: 'data:image/png;base64,AA' }, 'https://h.example')).toThrow(/icon URL/);
    const three = [...content.actions, { action: 'x', title: 'X', url: 'https://shop.example' }];
    expect(() => createPayloadTemplate({ ...content, actions: three }, 'https://h.example')).toThrow(/at most 2 action buttons/);
  });
});
