import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { Button, Card, CardContent, CardHeader, CardTitle, Spinner, Tooltip } from '../../../components/ui';

export const textLinkStyles =
  'rounded font-medium text-indigo-700 hover:text-indigo-900 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600';

interface ListCardProps {
  title: string;
  help: string;
  /** The "+ New" link of the panel, if it has one. */
  newLink?: { to: string; label: string };
  children: ReactNode;
  className?: string;
}

/** A dashboard panel listing a few items (spec §2: "first 5"). */
export function ListCard({ title, help, newLink, children, className }: ListCardProps) {
  return (
    <Card className={className}>
      <CardHeader className="flex-row items-center justify-between gap-2">
        <div className="flex min-w-0 items-center gap-1">
          <CardTitle>{title}</CardTitle>
          <Tooltip content={help} label={`About ${title}`} />
        </div>
        {newLink ? (
          <Link to={newLink.to} aria-label={newLink.label} className={`${textLinkStyles} shrink-0 text-sm`}>
            + New
          </Link>
        ) : null}
      </CardHeader>
      <CardContent className="py-2 sm:py-2">{children}</CardContent>
    </Card>
  );
}

/** The loading and error states a panel shows while its own list is fetched. */
export function ListCardStatus({ state, what, onRetry }: { state: 'pending' | 'error'; what: string; onRetry: () => void }) {
  if (state === 'pending') {
    return (
      <p className="flex items-center gap-2 py-6 text-sm text-slate-600" role="status">
        <Spinner /> Loading {what}...
      </p>
    );
  }
  return (
    <div className="flex flex-wrap items-center gap-3 py-6 text-sm text-red-700" role="alert">
      Could not load {what}.
      <Button variant="secondary" size="sm" onClick={onRetry}>
        Try again
      </Button>
    </div>
  );
}

/** A panel's empty state: a sentence and a link to create the first item. */
export function ListCardEmpty({ children }: { children: ReactNode }) {
  return <div className="py-6 text-center text-sm text-slate-600">{children}</div>;
}
