import { Info } from 'lucide-react';
import { useId, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { cn } from '../../lib/class-names';

interface TooltipProps {
  /** The help text. */
  content: ReactNode;
  /** Accessible name of the trigger, e.g. "About Site Name". */
  label: string;
  className?: string;
}

/** Space kept between an open tooltip and the edges of the window. */
const VIEWPORT_MARGIN_PX = 8;

/**
 * A small "i" button that reveals help text on hover, focus or tap (a second tap hides it); Escape
 * hides it. The text is the trigger's accessible description (WAI-ARIA tooltip pattern).
 * The bubble is centred over the trigger but moved sideways to stay inside the
 * window: a label near the left edge of a phone screen keeps its whole text.
 */
export function Tooltip({ content, label, className }: TooltipProps) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const bubble = useRef<HTMLSpanElement>(null);
  /** How the current press started: a tap fires focus (which opens) just before its click, which must not close it again. */
  const press = useRef<{ pointerType: string; wasOpen: boolean } | null>(null);
  const [shift, setShift] = useState(0);

  // Measured before paint each time it opens (unshifted: the shift is reset when it closes).
  useLayoutEffect(() => {
    const element = bubble.current;
    if (!open || !element) {
      setShift(0);
      return;
    }
    const box = element.getBoundingClientRect();
    const viewport = document.documentElement.clientWidth || window.innerWidth;
    let offset = 0;
    if (box.left < VIEWPORT_MARGIN_PX) offset = VIEWPORT_MARGIN_PX - box.left;
    else if (box.right > viewport - VIEWPORT_MARGIN_PX) offset = viewport - VIEWPORT_MARGIN_PX - box.right;
    setShift(Math.round(offset));
  }, [open]);

  return (
    <span
      className={cn('relative inline-flex align-middle', className)}
      // Hover is a mouse thing: a phone's tap also fires mouse-compatible enter/leave events, which must not open or close it.
      onPointerEnter={(event) => {
        if (event.pointerType === 'mouse') setOpen(true);
      }}
      onPointerLeave={(event) => {
        if (event.pointerType === 'mouse') setOpen(false);
      }}
    >
      <button
        type="button"
        aria-label={label}
        aria-describedby={id}
        className="inline-flex size-5 items-center justify-center rounded-full text-slate-500 hover:text-indigo-700 focus-visible:outline-2 focus-visible:outline-indigo-600"
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onPointerDown={(event) => {
          press.current = { pointerType: event.pointerType, wasOpen: open };
        }}
        onClick={() => {
          const started = press.current;
          press.current = null;
          // Keyboard (Enter/Space): toggle. Mouse: hovering already shows it, a click keeps it. Touch: a tap toggles.
          if (!started) setOpen((value) => !value);
          else setOpen(started.pointerType === 'mouse' ? true : !started.wasOpen);
        }}
        onKeyDown={(event) => {
          if (event.key === 'Escape') setOpen(false);
        }}
      >
        <Info className="size-4" aria-hidden="true" />
      </button>
      <span
        ref={bubble}
        id={id}
        role="tooltip"
        hidden={!open}
        style={open && shift ? { marginLeft: `${shift}px` } : undefined}
        className="absolute bottom-full left-1/2 z-50 mb-2 w-64 max-w-[calc(100vw-2rem)] -translate-x-1/2 rounded-lg bg-slate-900 px-3 py-2 text-left text-xs leading-relaxed font-normal text-white shadow-lg"
      >
        {content}
      </span>
    </span>
  );
}
