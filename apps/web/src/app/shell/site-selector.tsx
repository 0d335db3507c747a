import { ROLE_LABELS } from '@herald/contracts';
import { useId } from 'react';
import { Select } from '../../components/ui';
import { useSitesStore } from '../../lib/sites-store';

/**
 * Spec §2 Shell: switches the site every page works on. `onChosen` runs after
 * a switch: on phones and tablets the floating sidebar closes, as it does after
 * a navigation, so the chosen site's page is not left hidden behind it.
 */
export function SiteSelector({ onChosen }: { onChosen?: () => void }) {
  const id = useId();
  const sites = useSitesStore((s) => s.sites);
  const currentSite = useSitesStore((s) => s.currentSite);
  const setCurrentSite = useSitesStore((s) => s.setCurrentSite);
  // docs/product.md, "Teams": the sites you own, then those shared with you (with your role).
  const groups = [
    { label: 'Your sites', sites: sites.filter((site) => site.role === 'owner') },
    { label: 'Shared with me', sites: sites.filter((site) => site.role !== 'owner') },
  ];

  return (
    <div className="flex flex-col gap-1.5">
      <label htmlFor={id} className="text-xs font-semibold tracking-wide text-slate-600 uppercase">
        Current site
      </label>
      <Select
        id={id}
        value={currentSite?.id ?? ''}
        disabled={sites.length === 0}
        onChange={(event) => {
          setCurrentSite(sites.find((s) => s.id === event.target.value) ?? null);
          onChosen?.();
        }}
        data-testid="site-selector"
      >
        <option value="" disabled>
          Select a site...
        </option>
        {groups.map((group) =>
          group.sites.length === 0 ? null : (
            <optgroup key={group.label} label={group.label}>
              {group.sites.map((site) => (
                <option key={site.id} value={site.id}>
                  {site.role === 'owner' ? site.name : `${site.name} (${ROLE_LABELS[site.role]})`}
                </option>
              ))}
            </optgroup>
          ),
        )}
      </Select>
    </div>
  );
}
