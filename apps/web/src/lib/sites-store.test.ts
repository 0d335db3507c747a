import { describe, expect, it } from 'vitest';
import { makeSite } from '../test/fixtures';
import { SITES_STORAGE_NAME, useSitesStore } from './sites-store';

const store = () => useSitesStore.getState();
const a = makeSite({ id: 'a', name: 'Site A' });
const b = makeSite({ id: 'b', name: 'Site B' });
const c = makeSite({ id: 'c', name: 'Site C' });

describe('sites store (spec §4 Sites)', () => {
  it('makes the first site current when the list loads and none is current', () => {
    store().setSites([a, b]);
    expect(store()).toMatchObject({ sites: [a, b], currentSite: a, loaded: true });
  });

  it('keeps the chosen site when the list reloads', () => {
    store().setSites([a, b]);
    store().setCurrentSite(b);
    const freshB = { ...b, name: 'Site B (renamed)' };
    store().setSites([a, freshB]);
    expect(store().currentSite).toEqual(freshB);
  });

  it('appends a created site and makes it current', () => {
    store().setSites([a]);
    store().addSite(c);
    expect(store().sites).toEqual([a, c]);
    expect(store().currentSite).toEqual(c);
  });

  it('updates a site by id, and the current site when it is that one', () => {
    store().setSites([a, b]);
    const renamedA = { ...a, name: 'New A' };
    store().updateSite('a', renamedA);
    expect(store().sites).toEqual([renamedA, b]);
    expect(store().currentSite).toEqual(renamedA);

    const renamedB = { ...b, name: 'New B' };
    store().updateSite('b', renamedB);
    expect(store().sites).toEqual([renamedA, renamedB]);
    expect(store().currentSite).toEqual(renamedA);
  });

  it('removes a site by id; no site is current when the current one goes', () => {
    store().setSites([a, b]);
    store().removeSite('b');
    expect(store().sites).toEqual([a]);
    expect(store().currentSite).toEqual(a);

    store().removeSite('a');
    expect(store().sites).toEqual([]);
    expect(store().currentSite).toBeNull();
  });

  it('persists only the chosen site id, and restores that choice after a reload', async () => {
    store().setSites([a, b]);
    store().setCurrentSite(b);
    expect(JSON.parse(localStorage.getItem(SITES_STORAGE_NAME) ?? 'null')).toEqual({ state: { currentSiteId: 'b' }, version: 0 });

    store().reset();
    localStorage.setItem(SITES_STORAGE_NAME, JSON.stringify({ state: { currentSiteId: 'b' }, version: 0 }));
    await useSitesStore.persist.rehydrate();
    expect(store().currentSite).toBeNull();
    store().setSites([a, b]);
    expect(store().currentSite).toEqual(b);
  });

  it('falls back to the first site when the remembered one no longer exists', async () => {
    localStorage.setItem(SITES_STORAGE_NAME, JSON.stringify({ state: { currentSiteId: 'gone' }, version: 0 }));
    await useSitesStore.persist.rehydrate();
    store().setSites([a, b]);
    expect(store().currentSite).toEqual(a);
  });
});
