import type { Site } from '@herald/contracts';
import { Lock } from 'lucide-react';
import { Alert, Card, CardContent, CardDescription, CardHeader, CardTitle, CodeBlock, Tooltip } from '../../../components/ui';
import { SETTINGS_HELP } from '../../../lib/help-texts';

/** The API never returns the private key (spec §2: "the private key masked"), so a fixed mask stands in for it. */
const PRIVATE_KEY_MASK = '••••••••••••••••••••••••••••••••••••••••••••';

/** Settings → VAPID Keys (spec §2). */
export function VapidKeysPanel({ site }: { site: Site }) {
  return (
    <Card>
      <CardHeader>
        <CardTitle>VAPID Keys</CardTitle>
        <CardDescription>
          Browsers&apos; push services use this key pair to check that notifications for {site.name} really come from your Herald server.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        <div className="flex flex-col gap-2">
          <div className="flex items-center gap-1.5">
            <h3 className="text-sm font-medium text-slate-800">Public Key</h3>
            <Tooltip content={SETTINGS_HELP.vapidPublicKey} label="About Public Key" />
          </div>
          <p className="text-sm text-slate-600">Safe to share: the installation snippet already contains it.</p>
          <CodeBlock code={site.vapid_public_key} label="VAPID public key" />
        </div>
        <div className="flex flex-col gap-2">
          <div className="flex items-center gap-1.5">
            <h3 className="text-sm font-medium text-slate-800">Private Key</h3>
            <Tooltip content={SETTINGS_HELP.vapidPrivateKey} label="About Private Key" />
          </div>
          <div className="flex items-center gap-3 rounded-lg border border-slate-300 bg-slate-100 px-3 py-2.5">
            <Lock className="size-4 shrink-0 text-slate-600" aria-hidden="true" />
            <span className="truncate font-mono text-sm tracking-widest text-slate-700" aria-label="Private key hidden" role="img">
              {PRIVATE_KEY_MASK}
            </span>
          </div>
          <p className="text-sm text-slate-600">Stored only on your Herald server and never displayed.</p>
        </div>
        <Alert tone="warning" title="Never share your private key">
          Anyone who has it can send push notifications to your subscribers in your name. Herald keeps it on the server; do not copy it into your
          website, code repositories or support requests.
        </Alert>
      </CardContent>
    </Card>
  );
}
