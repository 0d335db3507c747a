import { roleNeededMessage, SERVER_ONLY_TAGS_MAX, type Site } from '@herald/contracts';
import { Eye, EyeOff, Lock, RefreshCw } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { RoleGatedButton } from '../../../components/role-gate';
import { Alert, Card, CardContent, CardDescription, CardHeader, CardTitle, CodeBlock, Field, Input, Spinner, Switch, TabPanel, Tabs, type TabItem } from '../../../components/ui';
import { errorMessage } from '../../../lib/api-client';
import { confirmAction, notify } from '../../../lib/dialogs';
import { usePermission } from '../../../lib/site-role';
import { useIdentitySecretQuery, useRotateIdentitySecretMutation, useUpdateSiteMutation } from '../api';

// Settings → Automation, "Identity verification" (docs/security.md): the
// switch, the site's identity secret, how a backend computes the hash, and the
// tags only the backend may set.

const SECRET_MASK = '••••••••••••••••••••••••••••••••';

type ServerLanguage = 'node' | 'php' | 'python';

const LANGUAGES: readonly TabItem<ServerLanguage>[] = [
  { value: 'node', label: 'Node.js' },
  { value: 'php', label: 'PHP' },
  { value: 'python', label: 'Python' },
];

/** The server-side code that computes `identity_hash` for a user id: HMAC-SHA256, lowercase hex. */
export function identityHashSnippet(language: ServerLanguage): string {
  switch (language) {
    case 'node':
      return [
        "import crypto from 'node:crypto';",
        '',
        '// HERALD_IDENTITY_SECRET: the identity secret, kept on your server only.',
        'export function heraldIdentityHash(userId) {',
        "  return crypto.createHmac('sha256', process.env.HERALD_IDENTITY_SECRET).update(String(userId)).digest('hex');",
        '}',
        '',
        '// In the page you render for the signed-in user:',
        '// herald.identify(userId, heraldIdentityHash(userId))',
      ].join('\n');
    case 'php':
      return [
        '<?php',
        '// HERALD_IDENTITY_SECRET: the identity secret, kept on your server only.',
        'function herald_identity_hash(string $userId): string {',
        "    return hash_hmac('sha256', $userId, getenv('HERALD_IDENTITY_SECRET'));",
        '}',
        '?>',
        '<script>',
        '  // In the page you render for the signed-in user (herald.js loads async):',
        '  const heraldIdentity = [<?= json_encode($userId) ?>, <?= json_encode(herald_identity_hash($userId)) ?>];',
        '  if (window.herald) window.herald.identify(...heraldIdentity);',
        "  else window.addEventListener('herald:ready', (event) => event.detail.identify(...heraldIdentity), { once: true });",
        '</script>',
      ].join('\n');
    case 'python':
      return [
        'import hashlib',
        'import hmac',
        'import os',
        '',
        '# HERALD_IDENTITY_SECRET: the identity secret, kept on your server only.',
        'def herald_identity_hash(user_id: str) -> str:',
        "    secret = os.environ['HERALD_IDENTITY_SECRET'].encode()",
        '    return hmac.new(secret, str(user_id).encode(), hashlib.sha256).hexdigest()',
        '',
        '# In the page you render for the signed-in user:',
        '# herald.identify(user_id, herald_identity_hash(user_id))',
      ].join('\n');
  }
}

function serverTagsExample(siteId: string, origin: string): string {
  return [
    `curl -X POST ${origin}/api/v1/sites/${siteId}/subscribers/tags \\`,
    '  -H "Authorization: Bearer $HERALD_API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    `  -d '${JSON.stringify({ external_id: 'customer-42', add: ['plan-pro'] })}'`,
  ].join('\n');
}

/** Like the secret, the rules of who may claim a user id are the owner's (docs/security.md, "Tenancy"). */
const IDENTITY_RULES_ACTION = 'change identity verification or server-only tags';

function VerificationSwitch({ site }: { site: Site }) {
  const mutation = useUpdateSiteMutation();
  const permission = usePermission('owner', IDENTITY_RULES_ACTION);
  const on = site.settings.identityVerification;

  function onChange(next: boolean) {
    if (!next && !confirmAction('Turn off identity verification? Any visitor will be able to claim any user id with herald.identify().')) return;
    mutation.mutate(
      { id: site.id, changes: { settings: { identityVerification: next } } },
      { onError: (error) => notify(errorMessage(error, 'Failed to update identity verification')) },
    );
  }

  return (
    <div className="flex flex-col gap-4">
      {on ? null : (
        <Alert tone="warning" title="Identity verification is off for this site">
          Any visitor can call herald.identify() with another person&apos;s user id, receive the notifications your backend sends to that id, and
          crowd that person&apos;s own browsers out of them. Compute the hash on your server as shown below, pass it to herald.identify(), then turn
          verification on.
        </Alert>
      )}
      <Switch
        label="Require a signed identity hash"
        checked={on}
        disabled={mutation.isPending || !permission.allowed}
        onCheckedChange={onChange}
        description={`herald.identify() calls without a valid hash are refused. Herald checks any hash it is given either way.${permission.allowed ? '' : ` ${permission.reason}: ${roleNeededMessage('owner')}`}`}
      />
    </div>
  );
}

/** The secret signs any user id, so only owners see or rotate it (docs/security.md, "Tenancy"). */
const SECRET_ACTION = 'see or rotate the identity secret';

function IdentitySecret({ site }: { site: Site }) {
  const permission = usePermission('owner', SECRET_ACTION);
  const [revealed, setRevealed] = useState(false);
  const query = useIdentitySecretQuery(site.id, revealed);
  const rotation = useRotateIdentitySecretMutation(site.id);

  function onRotate() {
    if (
      !confirmAction(
        'Are you sure you want to rotate the identity secret? Hashes made with the current secret are refused at once: put the new secret on your server right away.',
      )
    )
      return;
    rotation.mutate(undefined, {
      onSuccess: () => setRevealed(true),
      onError: (error) => notify(errorMessage(error, 'Failed to rotate the identity secret')),
    });
  }

  return (
    <section aria-labelledby="identity-secret-title" className="flex flex-col gap-2">
      <h3 id="identity-secret-title" className="text-sm font-semibold text-slate-900">
        Identity secret
      </h3>
      <p className="text-sm text-slate-600">
        Your server signs user ids with it. Keep it with your other server secrets, never in your pages or code repositories.
      </p>
      {revealed && query.isSuccess ? (
        <CodeBlock code={query.data} label="Identity secret" />
      ) : revealed && query.isError ? (
        <Alert tone="error">{errorMessage(query.error, 'Failed to load the identity secret')}</Alert>
      ) : (
        <div className="flex items-center gap-3 rounded-lg border border-slate-300 bg-slate-100 px-3 py-2.5">
          {revealed ? <Spinner /> : <Lock className="size-4 shrink-0 text-slate-600" aria-hidden="true" />}
          <span className="truncate font-mono text-sm tracking-widest text-slate-700" aria-label="Identity secret hidden" role="img">
            {SECRET_MASK}
          </span>
        </div>
      )}
      <div className="flex flex-wrap gap-2">
        <RoleGatedButton
          needed="owner"
          action={SECRET_ACTION}
          variant="secondary"
          size="sm"
          onClick={() => setRevealed((shown) => !shown)}
          icon={revealed ? <EyeOff className="size-4" aria-hidden="true" /> : <Eye className="size-4" aria-hidden="true" />}
        >
          {revealed ? 'Hide secret' : 'Reveal secret'}
        </RoleGatedButton>
        <RoleGatedButton
          needed="owner"
          action={SECRET_ACTION}
          variant="secondary"
          size="sm"
          onClick={onRotate}
          loading={rotation.isPending}
          icon={<RefreshCw className="size-4" aria-hidden="true" />}
        >
          Rotate secret
        </RoleGatedButton>
      </div>
      {permission.allowed ? null : (
        <p className="text-sm text-slate-600">
          {permission.reason}: {roleNeededMessage('owner')} Ask an owner of the site if you need it.
        </p>
      )}
    </section>
  );
}

function HashSnippets() {
  const [language, setLanguage] = useState<ServerLanguage>('node');
  return (
    <section aria-labelledby="identity-hash-title" className="flex flex-col gap-2">
      <h3 id="identity-hash-title" className="text-sm font-semibold text-slate-900">
        Compute the hash on your server
      </h3>
      <p className="text-sm text-slate-600">
        The hash is HMAC-SHA256 of the user id, keyed with the identity secret, as lowercase hex. Put it in the page of the signed-in user and pass
        it as the second argument of herald.identify().
      </p>
      <Tabs idBase="identity-hash" label="Server language" items={LANGUAGES} value={language} onValueChange={setLanguage} />
      <TabPanel idBase="identity-hash" value={language}>
        <CodeBlock code={identityHashSnippet(language)} label={`${LANGUAGES.find((l) => l.value === language)!.label} example`} />
      </TabPanel>
    </section>
  );
}

function ServerOnlyTags({ site }: { site: Site }) {
  const mutation = useUpdateSiteMutation();
  const permission = usePermission('owner', IDENTITY_RULES_ACTION);
  const [text, setText] = useState(site.settings.serverOnlyTags.join(', '));
  const [error, setError] = useState<string | undefined>();

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const tags = [...new Set(text.split(',').map((tag) => tag.trim()).filter(Boolean))];
    if (tags.length > SERVER_ONLY_TAGS_MAX) {
      setError(`At most ${SERVER_ONLY_TAGS_MAX} server-only tags`);
      return;
    }
    setError(undefined);
    mutation.mutate(
      { id: site.id, changes: { settings: { serverOnlyTags: tags } } },
      {
        onSuccess: (saved) => setText(saved.settings.serverOnlyTags.join(', ')),
        onError: (failure) => setError(errorMessage(failure, 'Failed to save server-only tags')),
      },
    );
  }

  return (
    <section aria-labelledby="server-only-tags-title" className="flex flex-col gap-2">
      <h3 id="server-only-tags-title" className="text-sm font-semibold text-slate-900">
        Server-only tags
      </h3>
      <form onSubmit={onSubmit} noValidate aria-label="Server-only tags" className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <Field
          label="Tags the browser may not change"
          error={error}
          hint="Separate tags with commas, e.g. plan-pro, vip. herald.addTags() and herald.removeTags() are refused for them; your backend sets them with an API key."
          className="flex-1"
        >
          {(control) => (
            <Input {...control} value={text} onChange={(event) => setText(event.target.value)} autoComplete="off" placeholder="plan-pro, vip" disabled={!permission.allowed} />
          )}
        </Field>
        <RoleGatedButton needed="owner" action={IDENTITY_RULES_ACTION} type="submit" loading={mutation.isPending} className="sm:mt-6">
          Save tags
        </RoleGatedButton>
      </form>
      <CodeBlock code={serverTagsExample(site.id, window.location.origin)} label="Set tags from your backend" />
    </section>
  );
}

/** Settings → Automation: who may say which user a browser belongs to, and which tags only the backend sets. */
export function IdentityVerificationPanel({ site }: { site: Site }) {
  return (
    <Card>
      <CardHeader>
        <CardTitle>Identity verification</CardTitle>
        <CardDescription>
          herald.identify() runs in the visitor&apos;s browser. With verification on, Herald accepts a user id only together with a hash that your
          server computes from it, so nobody can claim another person&apos;s id and receive their notifications.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        <VerificationSwitch site={site} />
        <IdentitySecret site={site} />
        <HashSnippets />
        <ServerOnlyTags site={site} />
      </CardContent>
    </Card>
  );
}
