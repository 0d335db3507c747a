import { Spinner } from '../components/ui';

/** Spec §2: shown while the stored login state is being restored. */
export function FullScreenLoading() {
  return (
    <div className="flex min-h-dvh items-center justify-center gap-3 bg-slate-50 text-sm font-medium text-slate-700" role="status">
      <Spinner className="text-indigo-600" />
      Loading...
    </div>
  );
}
