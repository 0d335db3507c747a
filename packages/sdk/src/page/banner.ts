/**
 * The banner Herald shows on a site's pages (the soft prompt, the test-device
 * offer): non-modal, never takes focus, the first element of <body> so keyboard
 * and screen-reader users meet it first, in a shadow root so the page's styles
 * and scripts leave it alone (styles through a constructed stylesheet, which a
 * strict `style-src` CSP does not block). Texts are set as textContent.
 */
export interface BannerOptions {
  headline: string;
  text: string;
  acceptLabel: string;
  laterLabel: string;
  position: 'top' | 'bottom';
  colors: { background: string; text: string; button: string; buttonText: string };
  /** The marker attribute on the host element, e.g. data-herald-prompt. */
  marker: string;
}

export interface Banner {
  host: HTMLElement;
  accept: HTMLButtonElement;
  later: HTMLButtonElement;
  /** Replaces the texts and buttons with a message and a Close button (a result). */
  showMessage(message: string): void;
  remove(): void;
}

const BANNER_CSS = `
:host{all:initial!important}
.b{position:fixed;z-index:2147483647;left:16px;right:16px;max-width:400px;box-sizing:border-box;display:flex;flex-wrap:wrap;align-items:center;gap:10px 12px;padding:16px;background:var(--bg);color:var(--fg);border:1px solid rgba(0,0,0,.15);border-radius:10px;box-shadow:0 8px 24px rgba(0,0,0,.18);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.b.bottom{bottom:16px}
.b.top{top:16px;animation:slide .25s ease-out}
@keyframes slide{from{transform:translateY(-24px);opacity:0}to{transform:none;opacity:1}}
@media (prefers-reduced-motion:reduce){.b.top{animation:none}}
.t{flex:1 1 200px;margin:0}
.h{margin:0;font-weight:600}
.x{margin:4px 0 0}
.a{display:flex;gap:8px}
button{font:inherit;font-weight:600;cursor:pointer;min-height:40px;padding:8px 16px;border-radius:8px;border:1px solid currentColor;background:transparent;color:var(--fg)}
button.y{background:var(--btn);border-color:var(--btn);color:var(--btn-fg)}
button:hover{filter:brightness(.95)}
button:focus-visible{outline:3px solid var(--btn);outline-offset:2px}
`;

export function attachStyles(root: ShadowRoot, css: string): void {
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet.prototype.replaceSync === 'function') {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
    return;
  }
  const style = document.createElement('style');
  style.textContent = css;
  root.append(style);
}

function button(label: string, className: string): HTMLButtonElement {
  const element = document.createElement('button');
  element.type = 'button';
  element.className = className;
  element.textContent = label;
  return element;
}

let bannerCount = 0;

export function showBanner(options: BannerOptions): Banner {
  const host = document.createElement('div');
  host.setAttribute(options.marker, '');
  const root = host.attachShadow({ mode: 'open' });
  attachStyles(root, BANNER_CSS);

  bannerCount += 1;
  const headlineId = `herald-banner-${bannerCount}`;
  const banner = document.createElement('div');
  banner.className = `b ${options.position}`;
  banner.setAttribute('role', 'dialog');
  banner.setAttribute('aria-labelledby', headlineId);
  banner.style.setProperty('--bg', options.colors.background);
  banner.style.setProperty('--fg', options.colors.text);
  banner.style.setProperty('--btn', options.colors.button);
  banner.style.setProperty('--btn-fg', options.colors.buttonText);

  const texts = document.createElement('div');
  texts.className = 't';
  const headline = document.createElement('p');
  headline.className = 'h';
  headline.id = headlineId;
  headline.textContent = options.headline;
  texts.append(headline);
  const body = document.createElement('p');
  body.className = 'x';
  body.textContent = options.text;
  if (options.text) texts.append(body);

  const actions = document.createElement('div');
  actions.className = 'a';
  const accept = button(options.acceptLabel, 'y');
  const later = button(options.laterLabel, 'n');
  actions.append(accept, later);
  banner.append(texts, actions);
  root.append(banner);
  document.body.prepend(host);

  return {
    host,
    accept,
    later,
    showMessage(message) {
      headline.textContent = message;
      body.remove();
      const close = button('Close', 'n');
      close.addEventListener('click', () => host.remove());
      actions.replaceChildren(close);
    },
    remove: () => host.remove(),
  };
}
