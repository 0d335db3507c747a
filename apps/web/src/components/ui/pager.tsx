import { ChevronLeft, ChevronRight } from 'lucide-react';
import { Button } from './button';

/** "Page N of M" with Previous and Next, under a list that spans several pages. */
export function Pager({ page, pages, onPrevious, onNext }: { page: number; pages: number; onPrevious: () => void; onNext: () => void }) {
  return (
    <nav aria-label="Pagination" className="mt-4 flex items-center justify-between gap-3">
      <p className="text-sm text-slate-600">
        Page {page} of {pages}
      </p>
      <div className="flex gap-2">
        <Button variant="secondary" size="sm" onClick={onPrevious} disabled={page <= 1} icon={<ChevronLeft className="size-4" aria-hidden="true" />}>
          Previous
        </Button>
        <Button variant="secondary" size="sm" onClick={onNext} disabled={page >= pages}>
          Next
          <ChevronRight className="size-4" aria-hidden="true" />
        </Button>
      </div>
    </nav>
  );
}
