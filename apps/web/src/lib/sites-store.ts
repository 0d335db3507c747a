import type { Site } from '@herald/contracts';
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';

export const SITES_STORAGE_NAME = 'site-storage';

export interface SitesState {
  sites: Site[];
  currentSite: Site | null;
  /** The chosen site's id; persisted so a reload keeps the selection before the list arrives. */
  currentSiteId: string | null;
  /** True once the list has come from the server in this session. */
  loaded: boolean;
  /** The server's list: keeps the chosen site if it still exists, else the first becomes current (spec §4 Sites). */
  setSites: (sites: Site[]) => void;
  /** Appends a created site, which becomes current. */
  addSite: (site: Site) => void;
  /** Replaces a site by id; the current site too when it is that one. */
  updateSite: (id: string, site: Site) => void;
  /** Removes a site by id; when it was current, no site is current any more. */
  removeSite: (id: string) => void;
  setCurrentSite: (site: Site | null) => void;
  /** Forgets everything (sign-out). */
  reset: () => void;
}

const empty = { sites: [], currentSite: null, currentSiteId: null, loaded: false } satisfies Partial<SitesState>;

export const useSitesStore = create<SitesState>()(
  persist(
    (set) => ({
      ...empty,
      setSites: (sites) =>
        set((state) => {
          const current = sites.find((s) => s.id === (state.currentSite?.id ?? state.currentSiteId)) ?? sites[0] ?? null;
          return { sites, currentSite: current, currentSiteId: current?.id ?? null, loaded: true };
        }),
      addSite: (site) => set((state) => ({ sites: [...state.sites, site], currentSite: site, currentSiteId: site.id })),
      updateSite: (id, site) =>
        set((state) => ({
          sites: state.sites.map((s) => (s.id === id ? site : s)),
          ...(state.currentSite?.id === id ? { currentSite: site } : {}),
        })),
      removeSite: (id) =>
        set((state) => ({
          sites: state.sites.filter((s) => s.id !== id),
          ...(state.currentSite?.id === id || state.currentSiteId === id ? { currentSite: null, currentSiteId: null } : {}),
        })),
      setCurrentSite: (site) => set({ currentSite: site, currentSiteId: site?.id ?? null }),
      reset: () => set(empty),
    }),
    {
      name: SITES_STORAGE_NAME,
      version: 0,
      storage: createJSONStorage(() => localStorage),
      partialize: (state) => ({ currentSiteId: state.currentSiteId }),
    },
  ),
);

/** The selected site, and whether the list has loaded (so "no site" is not shown while it loads). */
export function useCurrentSite(): { currentSite: Site | null; loaded: boolean } {
  const currentSite = useSitesStore((s) => s.currentSite);
  const loaded = useSitesStore((s) => s.loaded);
  return { currentSite, loaded };
}
