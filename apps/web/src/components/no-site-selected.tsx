import { Plus } from 'lucide-react';
import type { ReactNode } from 'react';
import { ButtonLink, EmptyState, Spinner } from './ui';

/**
 * What a per-site page shows without a current site (spec §2: "No Site
 * Selected"), or while the site list is still loading.
 */
export function NoSiteSelected({ loaded, icon, description, loading }: { loaded: boolean; icon: ReactNode; description: string; loading?: ReactNode }) {
  if (!loaded) {
    return (
      loading ?? (
        <p className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
          <Spinner /> Loading sites...
        </p>
      )
    );
  }
  return (
    <EmptyState
      icon={icon}
      title="No Site Selected"
      description={description}
      action={
        <ButtonLink to="/sites/new" icon={<Plus className="hidden size-4 sm:block" aria-hidden="true" />}>
          New Site
        </ButtonLink>
      }
    />
  );
}
