import { Megaphone, Plus } from 'lucide-react';
import { ButtonLink, EmptyState, Spinner } from '../../../components/ui';

/** What a campaigns page shows before a site is chosen (or while the site list loads). */
export function NoSiteSelected({ loaded }: { loaded: boolean }) {
  if (!loaded) {
    return (
      <div className="flex items-center gap-3 py-12 text-sm text-slate-600" role="status">
        <Spinner /> Loading sites...
      </div>
    );
  }
  return (
    <EmptyState
      icon={<Megaphone className="size-6" />}
      title="No Site Selected"
      description="Create or select a site to manage its welcome campaigns."
      action={
        <ButtonLink to="/sites/new" icon={<Plus className="hidden size-4 sm:block" aria-hidden="true" />}>
          New Site
        </ButtonLink>
      }
    />
  );
}
