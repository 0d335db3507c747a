// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { SITE_KEY } from '../testing/keys';
import { readScriptSettings } from './script-settings';

function script(attributes: Record<string, string>): HTMLScriptElement {
  const element = document.createElement('script');
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  return element;
}

const base = { src: 'https://push.example.com/sdk/herald.js', 'data-site-id': 'site_1', 'data-vapid-key': SITE_KEY };

describe('readScriptSettings', () => {
  it('reads the install code’s attributes with their defaults', () => {
    expect(readScriptSettings(script(base))).toEqual({
      siteId: 'site_1',
      vapidKey: SITE_KEY,
      api: 'https://push.example.com',
      ownWorker: null,
      prompt: 'auto',
    });
  });

  it('keeps the path prefix of a Herald served below the origin root', () => {
    expect(readScriptSettings(script({ ...base, src: 'https://example.com/herald/sdk/herald.js' })).api).toBe('https://example.com/herald');
  });

  it('reads data-api, data-worker and data-prompt', () => {
    const settings = readScriptSettings(
      script({ ...base, 'data-api': 'https://api.example.com/', 'data-worker': '/app/sw.js?v=3', 'data-prompt': 'manual' }),
    );
    expect(settings).toMatchObject({ api: 'https://api.example.com', ownWorker: '/app/sw.js?v=3', prompt: 'manual' });
  });

  it('refuses a missing site id, a malformed key, a cross-origin worker and a non-http API', () => {
    expect(() => readScriptSettings(script({ ...base, 'data-site-id': '' }))).toThrow('data-site-id and data-vapid-key');
    expect(() => readScriptSettings(script({ ...base, 'data-vapid-key': 'BA1Hxzyi' }))).toThrow('not a VAPID public key');
    expect(() => readScriptSettings(script({ ...base, 'data-worker': 'https://elsewhere.example/sw.js' }))).toThrow(
      'data-worker must be a path on this site.',
    );
    expect(() => readScriptSettings(script({ ...base, 'data-api': 'javascript:alert(1)' }))).toThrow('data-api must be an http(s) URL.');
  });
});
