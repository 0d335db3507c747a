import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { HeraldLogo } from '../../../components/herald-logo';

interface AuthLayoutProps {
  title: string;
  description?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}

/** The centred card used by sign-in, password and verification screens. */
export function AuthLayout({ title, description, children, footer }: AuthLayoutProps) {
  return (
    <div className="flex min-h-dvh flex-col items-center bg-slate-50 px-4 py-10 sm:justify-center sm:py-16">
      <header className="mb-8">
        <Link to="/" className="block rounded-md" aria-label="Herald home">
          <HeraldLogo />
        </Link>
      </header>
      <main className="w-full max-w-md">
        <div className="rounded-2xl border border-slate-200 bg-white px-6 py-8 shadow-sm sm:px-8">
          <h1 className="text-2xl font-semibold tracking-tight text-slate-900">{title}</h1>
          {description ? <div className="mt-2 text-sm text-slate-600">{description}</div> : null}
          <div className="mt-6">{children}</div>
        </div>
        {footer ? <div className="mt-6 text-center text-sm text-slate-600">{footer}</div> : null}
      </main>
    </div>
  );
}

/** A status screen inside the auth card: an icon, a heading and what to do next. */
export function AuthStatus({ icon, title, children }: { icon: ReactNode; title: string; children?: ReactNode }) {
  return (
    <div className="flex min-h-dvh flex-col items-center bg-slate-50 px-4 py-10 sm:justify-center sm:py-16">
      <header className="mb-8">
        <Link to="/" className="block rounded-md" aria-label="Herald home">
          <HeraldLogo />
        </Link>
      </header>
      <main className="w-full max-w-md">
        <div className="flex flex-col items-center rounded-2xl border border-slate-200 bg-white px-6 py-10 text-center shadow-sm sm:px-8">
          <div aria-hidden="true">{icon}</div>
          <h1 className="mt-4 text-2xl font-semibold tracking-tight text-slate-900">{title}</h1>
          {children ? <div className="mt-3 flex w-full flex-col items-center gap-4 text-sm text-slate-600">{children}</div> : null}
        </div>
      </main>
    </div>
  );
}
