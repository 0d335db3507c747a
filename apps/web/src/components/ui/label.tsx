import type { LabelHTMLAttributes, ReactNode } from 'react';
import { cn } from '../../lib/class-names';
import { Tooltip } from './tooltip';

interface LabelProps extends LabelHTMLAttributes<HTMLLabelElement> {
  /** Shows the required marker (the control itself carries `required` for assistive technology). */
  required?: boolean;
  /** Optional help text shown in a tooltip next to the label (spec §2 Help Center). */
  tooltip?: ReactNode;
}

export function Label({ required = false, tooltip, className, children, ...rest }: LabelProps) {
  return (
    <span className="inline-flex items-center gap-1.5">
      <label className={cn('text-sm font-medium text-slate-800', className)} {...rest}>
        {children}
        {required ? (
          <span className="ml-0.5 text-red-700" aria-hidden="true">
            *
          </span>
        ) : null}
      </label>
      {tooltip ? <Tooltip content={tooltip} label={`About ${typeof children === 'string' ? children : 'this field'}`} /> : null}
    </span>
  );
}
