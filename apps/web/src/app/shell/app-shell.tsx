import { useEffect, useState } from 'react';
import { Outlet, useLocation } from 'react-router';
import { ViewerNotice } from '../../components/role-gate';
import { DESKTOP_MEDIA_QUERY, useMediaQuery } from '../../lib/use-media-query';
import { ShellHeader } from './shell-header';
import { Sidebar } from './sidebar';

/**
 * Spec §2 Shell: sidebar + header around every signed-in page except
 * /sites/new. The sidebar is open by default at ≥ 1024 px; on narrower
 * screens it floats over the page and closes after each navigation.
 */
export function AppShell() {
  const isDesktop = useMediaQuery(DESKTOP_MEDIA_QUERY);
  // Every navigation gets a new key, even a click on the current page's link.
  const { key: locationKey } = useLocation();
  const [open, setOpen] = useState(isDesktop);
  const [shownFor, setShownFor] = useState({ isDesktop, locationKey });

  // Adjusting state while rendering (not in an effect) avoids a flash of the old layout.
  if (shownFor.isDesktop !== isDesktop || shownFor.locationKey !== locationKey) {
    setShownFor({ isDesktop, locationKey });
    if (shownFor.isDesktop !== isDesktop) setOpen(isDesktop);
    else if (!isDesktop) setOpen(false);
  }

  const overlay = open && !isDesktop;
  useEffect(() => {
    if (!overlay) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setOpen(false);
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [overlay]);

  return (
    <div className="flex min-h-dvh bg-slate-50">
      <a
        href="#main-content"
        className="sr-only z-50 rounded-lg bg-white px-4 py-2 text-sm font-medium text-indigo-700 shadow focus:not-sr-only focus:fixed focus:top-3 focus:left-3"
      >
        Skip to content
      </a>
      {open ? <Sidebar overlay={overlay} onClose={() => setOpen(false)} /> : null}
      {overlay ? <div className="fixed inset-0 z-30 bg-slate-900/40" aria-hidden="true" onClick={() => setOpen(false)} /> : null}
      <div className="flex min-w-0 flex-1 flex-col">
        <ShellHeader sidebarOpen={open} onToggleSidebar={() => setOpen((value) => !value)} />
        <main id="main-content" tabIndex={-1} className="mx-auto w-full max-w-6xl flex-1 px-4 py-6 focus:outline-none sm:px-6 lg:px-8 lg:py-8">
          <ViewerNotice />
          <Outlet />
        </main>
      </div>
    </div>
  );
}
