import { ExternalLink, Menu } from 'lucide-react';
import { Button, ButtonLink, Spinner } from '../../components/ui';
import { useSitesQueryState } from '../../features/sites/api';
import { useSitesStore } from '../../lib/sites-store';
import { SIDEBAR_ID } from './sidebar';

interface ShellHeaderProps {
  sidebarOpen: boolean;
  onToggleSidebar: () => void;
}

/** Spec §2 Shell header: the current site, or what to do when there is none. */
function CurrentSiteSummary() {
  const sites = useSitesStore((s) => s.sites);
  const currentSite = useSitesStore((s) => s.currentSite);
  const loaded = useSitesStore((s) => s.loaded);
  const sitesQuery = useSitesQueryState();

  if (currentSite) {
    return (
      <div className="min-w-0" data-testid="current-site">
        <p className="truncate text-sm font-semibold text-slate-900">{currentSite.name}</p>
        <a
          href={currentSite.url}
          target="_blank"
          rel="noopener noreferrer"
          className="inline-flex max-w-full items-center gap-1 rounded text-xs text-slate-600 hover:text-indigo-700 hover:underline"
        >
          <span className="truncate">{currentSite.url}</span>
          <ExternalLink className="size-3 shrink-0" aria-hidden="true" />
          <span className="sr-only">(opens in a new tab)</span>
        </a>
      </div>
    );
  }
  if (!loaded && sitesQuery.isError) {
    return (
      <div className="flex min-w-0 items-center gap-3" role="alert">
        <p className="truncate text-sm text-red-700">Could not load your sites.</p>
        <Button size="sm" variant="secondary" onClick={() => void sitesQuery.refetch()}>
          Retry
        </Button>
      </div>
    );
  }
  if (!loaded) {
    return (
      <p className="flex items-center gap-2 text-sm text-slate-600" role="status">
        <Spinner /> Loading sites...
      </p>
    );
  }
  if (sites.length === 0) {
    return (
      <div className="min-w-0" data-testid="current-site">
        <p className="truncate text-sm font-semibold text-slate-900">No sites yet</p>
        {/* Wraps rather than cut off on a phone: the whole sentence is the hint. */}
        <p className="line-clamp-2 text-xs leading-4 text-slate-600">Create your first site to get started</p>
      </div>
    );
  }
  return (
    <div className="min-w-0" data-testid="current-site">
      <p className="truncate text-sm font-semibold text-slate-900">Select a site</p>
    </div>
  );
}

export function ShellHeader({ sidebarOpen, onToggleSidebar }: ShellHeaderProps) {
  return (
    <header className="sticky top-0 z-30 flex h-16 items-center gap-3 border-b border-slate-200 bg-white/95 px-4 backdrop-blur sm:px-6">
      <button
        type="button"
        onClick={onToggleSidebar}
        aria-expanded={sidebarOpen}
        aria-controls={SIDEBAR_ID}
        aria-label={sidebarOpen ? 'Close navigation' : 'Open navigation'}
        className="inline-flex size-9 shrink-0 items-center justify-center rounded-lg text-slate-600 hover:bg-slate-100 hover:text-slate-900"
      >
        <Menu className="size-5" aria-hidden="true" />
      </button>
      <div className="min-w-0 flex-1">
        <CurrentSiteSummary />
      </div>
      <ButtonLink to="/sites/new" size="sm" variant="secondary" data-testid="new-site-link">
        + New Site
      </ButtonLink>
    </header>
  );
}
