import type { Site } from '@herald/contracts';
import { Code2 } from 'lucide-react';
import { useState } from 'react';
import { Alert, Button, Card, CardContent, CardDescription, CardHeader, CardTitle, CodeBlock } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { useInstallCodeQuery } from '../api';

/** Settings → Installation (spec §2): the code is fetched only when asked for. */
export function InstallationPanel({ site }: { site: Site }) {
  const [requested, setRequested] = useState(false);
  const query = useInstallCodeQuery(site.id, requested);

  // The dashboard's checklist may have fetched the code already: it shows here once asked for, as the spec says.
  if (!requested || !query.data) {
    return (
      <Card>
        <CardHeader>
          <CardTitle>Install Herald on {site.name}</CardTitle>
          <CardDescription>
            Add a short snippet and one service worker file to your site. Visitors can then subscribe, and you can start sending notifications.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col items-start gap-4">
          {query.isError ? <Alert tone="error">{errorMessage(query.error, 'Failed to load the installation code. Please try again.')}</Alert> : null}
          <Button
            onClick={() => (query.isError ? void query.refetch() : setRequested(true))}
            loading={query.isFetching}
            icon={<Code2 className="size-4" aria-hidden="true" />}
          >
            Show Installation Code
          </Button>
        </CardContent>
      </Card>
    );
  }

  const { snippet, serviceWorker, nextSteps, warnings } = query.data;
  return (
    <div className="flex flex-col gap-6">
      {warnings.map((warning) => (
        <Alert key={warning} tone="warning" title="Herald is not on HTTPS">
          {warning}
        </Alert>
      ))}
      <Card>
        <CardHeader>
          <CardTitle>1. Add the snippet to your pages</CardTitle>
          <CardDescription>
            Paste this code just before the closing <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">&lt;/body&gt;</code>{' '}
            tag on every page where visitors may subscribe.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <CodeBlock code={snippet} label="Installation snippet" />
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>2. Add the service worker file</CardTitle>
          <CardDescription>
            Create a file named <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-xs text-slate-800">{serviceWorker.fileName}</code> at the
            root of your site (next to your home page) with this content. It must be served from the root, over HTTPS.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <CodeBlock code={serviceWorker.content} label={serviceWorker.fileName} />
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Next steps</CardTitle>
        </CardHeader>
        <CardContent>
          <ol className="flex list-decimal flex-col gap-2 pl-5 text-sm leading-relaxed text-slate-700 marker:font-semibold marker:text-indigo-700">
            {nextSteps.map((step) => (
              <li key={step}>{step}</li>
            ))}
          </ol>
        </CardContent>
      </Card>
    </div>
  );
}
