import { ArrowRight, Check, CircleCheck } from 'lucide-react';
import { Link } from 'react-router';
import { HeraldLogo } from '../../../components/herald-logo';
import { Button, ButtonLink } from '../../../components/ui';
import { cn } from '../../../lib/class-names';
import { DashboardMockup } from '../components/dashboard-mockup';
import { AUDIENCES, BENEFITS, FEATURES, PLANS } from '../landing-content';

const navLinkStyles = 'rounded-md px-2 py-1 text-sm font-medium text-slate-700 hover:text-indigo-700';

function SectionHeading({ eyebrow, title, description }: { eyebrow: string; title: string; description: string }) {
  return (
    <div className="mx-auto max-w-2xl text-center">
      <p className="text-sm font-semibold tracking-wide text-indigo-700 uppercase">{eyebrow}</p>
      <h2 className="mt-2 text-3xl font-semibold tracking-tight text-slate-900 sm:text-4xl">{title}</h2>
      <p className="mt-4 text-base text-slate-600 sm:text-lg">{description}</p>
    </div>
  );
}

/** Spec §1/§2 "/": the public landing page. Sign-up and paid plans are disabled until payments exist. */
export function LandingPage() {
  return (
    <div className="min-h-dvh bg-white">
      <header className="sticky top-0 z-30 border-b border-slate-200 bg-white/95 backdrop-blur">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center justify-between gap-x-6 gap-y-2 px-4 py-3 sm:px-6">
          <Link to="/" className="rounded-md" aria-label="Herald home">
            <HeraldLogo />
          </Link>
          <nav aria-label="Main" className="order-3 w-full sm:order-2 sm:w-auto">
            <ul className="flex items-center justify-center gap-1 sm:gap-4">
              <li>
                <a href="#features" className={navLinkStyles}>
                  Features
                </a>
              </li>
              <li>
                <a href="#benefits" className={navLinkStyles}>
                  Benefits
                </a>
              </li>
              <li>
                <a href="#pricing" className={navLinkStyles}>
                  Pricing
                </a>
              </li>
            </ul>
          </nav>
          <ButtonLink to="/login" size="sm" variant="secondary" className="order-2 sm:order-3">
            Login
          </ButtonLink>
        </div>
      </header>

      <main>
        <section className="relative overflow-hidden bg-gradient-to-b from-indigo-50 via-white to-white px-4 pt-16 pb-20 sm:px-6 sm:pt-24">
          <div className="mx-auto max-w-3xl text-center">
            <p className="inline-flex items-center gap-2 rounded-full bg-white px-3 py-1 text-xs font-medium text-indigo-800 ring-1 ring-indigo-200">
              Self-hosted · Privacy-focused · Open web standards
            </p>
            <h1 className="mt-6 text-4xl font-bold tracking-tight text-slate-900 sm:text-6xl">
              Push notifications you <span className="text-indigo-700">own</span>
            </h1>
            <p className="mt-6 text-lg leading-relaxed text-slate-600 sm:text-xl">
              Herald is a self-hosted, privacy-focused web push platform for e-commerce sites, content creators and SaaS platforms. Reach your
              visitors in their browser, while your subscribers and data stay on your own server.
            </p>
            <div className="mt-10 flex flex-col items-center justify-center gap-3 sm:flex-row">
              <Button size="lg" disabled className="w-full sm:w-auto">
                Start Free Trial (Coming Soon)
              </Button>
              <ButtonLink to="/login" size="lg" variant="secondary" className="w-full sm:w-auto" icon={<ArrowRight className="size-4" aria-hidden="true" />}>
                Sign In
              </ButtonLink>
            </div>
            <p className="mt-4 text-sm text-slate-600">14-day free trial, no credit card required</p>
          </div>
          <div className="mt-16">
            <DashboardMockup />
          </div>
        </section>

        <section id="features" className="scroll-mt-24 px-4 py-20 sm:px-6">
          <SectionHeading
            eyebrow="Features"
            title="Everything you need to engage your audience"
            description="From a single announcement to automated sequences, Herald covers the whole life of a push notification."
          />
          <ul className="mx-auto mt-12 grid max-w-6xl gap-6 sm:grid-cols-2 lg:grid-cols-3">
            {FEATURES.map(({ title, description, icon: Icon }) => (
              <li key={title} className="rounded-2xl border border-slate-200 bg-white p-6 shadow-sm">
                <span className="flex size-11 items-center justify-center rounded-xl bg-indigo-600 text-white" aria-hidden="true">
                  <Icon className="size-5" />
                </span>
                <h3 className="mt-4 text-lg font-semibold text-slate-900">{title}</h3>
                <p className="mt-2 text-sm leading-relaxed text-slate-600">{description}</p>
              </li>
            ))}
          </ul>
        </section>

        <section id="benefits" className="scroll-mt-24 bg-slate-50 px-4 py-20 sm:px-6">
          <SectionHeading
            eyebrow="Benefits"
            title="Why teams choose Herald"
            description="Keep the reach of push notifications without handing your audience to someone else."
          />
          <ul className="mx-auto mt-12 grid max-w-5xl gap-x-10 gap-y-8 sm:grid-cols-2">
            {BENEFITS.map((benefit) => (
              <li key={benefit.title} className="flex gap-4">
                <CircleCheck className="mt-0.5 size-6 shrink-0 text-indigo-600" aria-hidden="true" />
                <div>
                  <h3 className="text-base font-semibold text-slate-900">{benefit.title}</h3>
                  <p className="mt-1 text-sm leading-relaxed text-slate-600">{benefit.description}</p>
                </div>
              </li>
            ))}
          </ul>
        </section>

        <section aria-labelledby="perfect-for" className="px-4 py-20 sm:px-6">
          <div className="mx-auto max-w-2xl text-center">
            <h2 id="perfect-for" className="text-3xl font-semibold tracking-tight text-slate-900 sm:text-4xl">
              Perfect For
            </h2>
            <p className="mt-4 text-base text-slate-600 sm:text-lg">Whatever you publish or sell, push brings people back.</p>
          </div>
          <ul className="mx-auto mt-12 grid max-w-6xl gap-6 md:grid-cols-3">
            {AUDIENCES.map(({ title, description, icon: Icon }) => (
              <li key={title} className="rounded-2xl border border-slate-200 bg-gradient-to-b from-white to-indigo-50/60 p-6">
                <Icon className="size-7 text-indigo-700" aria-hidden="true" />
                <h3 className="mt-4 text-lg font-semibold text-slate-900">{title}</h3>
                <p className="mt-2 text-sm leading-relaxed text-slate-600">{description}</p>
              </li>
            ))}
          </ul>
        </section>

        <section id="pricing" className="scroll-mt-24 bg-slate-50 px-4 py-20 sm:px-6">
          <SectionHeading eyebrow="Pricing" title="Simple, transparent pricing" description="Host it yourself for free, or let us run it for you." />
          <p className="mt-4 text-center text-sm font-medium text-slate-700">14-day free trial, no credit card required</p>
          <ul className="mx-auto mt-12 grid max-w-6xl gap-6 lg:grid-cols-3">
            {PLANS.map((plan) => (
              <li
                key={plan.name}
                className={cn(
                  'flex flex-col rounded-2xl border bg-white p-6 shadow-sm sm:p-8',
                  plan.highlighted ? 'border-indigo-600 ring-2 ring-indigo-600' : 'border-slate-200',
                )}
              >
                <div className="flex items-center justify-between gap-3">
                  <h3 className="text-lg font-semibold text-slate-900">{plan.name}</h3>
                  {plan.highlighted ? <span className="rounded-full bg-indigo-50 px-2.5 py-0.5 text-xs font-semibold text-indigo-700">Popular</span> : null}
                </div>
                <p className="mt-1 text-sm text-slate-600">{plan.description}</p>
                <p className="mt-6 flex items-baseline gap-1">
                  <span className="text-4xl font-bold tracking-tight text-slate-900">{plan.price}</span>
                  <span className="text-sm font-medium text-slate-600">{plan.period}</span>
                </p>
                <ul className="mt-6 flex flex-1 flex-col gap-3">
                  {plan.features.map((feature) => (
                    <li key={feature} className="flex gap-3 text-sm text-slate-700">
                      <Check className="mt-0.5 size-4 shrink-0 text-indigo-600" aria-hidden="true" />
                      {feature}
                    </li>
                  ))}
                </ul>
                <Button disabled variant={plan.highlighted ? 'primary' : 'secondary'} className="mt-8 w-full">
                  Coming Soon
                </Button>
              </li>
            ))}
          </ul>
        </section>

        <section className="px-4 py-20 sm:px-6">
          <div className="mx-auto flex max-w-4xl flex-col items-center rounded-3xl bg-indigo-700 px-6 py-14 text-center sm:px-12">
            <h2 className="text-3xl font-semibold tracking-tight text-white sm:text-4xl">Ready to reach your audience?</h2>
            <p className="mt-4 max-w-xl text-base text-indigo-100 sm:text-lg">
              Sign in to your Herald server, add your site and send your first notification in minutes.
            </p>
            <Link
              to="/login"
              className="mt-8 inline-flex h-12 items-center gap-2 rounded-lg bg-white px-6 text-base font-semibold text-indigo-700 shadow-sm hover:bg-indigo-50 focus-visible:outline-white"
            >
              Sign In
              <ArrowRight className="size-4" aria-hidden="true" />
            </Link>
          </div>
        </section>
      </main>

      <footer className="border-t border-slate-200 bg-white px-4 py-10 sm:px-6">
        <div className="mx-auto flex max-w-6xl flex-col gap-6 sm:flex-row sm:items-center sm:justify-between">
          <div>
            <HeraldLogo />
            <p className="mt-2 text-sm text-slate-600">Self-hosted web push notifications.</p>
          </div>
          <nav aria-label="Footer">
            <ul className="flex flex-wrap gap-x-6 gap-y-2 text-sm">
              <li>
                <a href="#features" className="rounded text-slate-700 hover:text-indigo-700">
                  Features
                </a>
              </li>
              <li>
                <a href="#pricing" className="rounded text-slate-700 hover:text-indigo-700">
                  Pricing
                </a>
              </li>
              <li>
                <a href="/api/docs" className="rounded text-slate-700 hover:text-indigo-700">
                  API Reference
                </a>
              </li>
              <li>
                <Link to="/login" className="rounded text-slate-700 hover:text-indigo-700">
                  Sign In
                </Link>
              </li>
            </ul>
          </nav>
        </div>
        <p className="mx-auto mt-8 max-w-6xl text-xs text-slate-600">© {new Date().getFullYear()} Herald. All rights reserved.</p>
      </footer>
    </div>
  );
}
