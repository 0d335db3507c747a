import type { InputHTMLAttributes, SelectHTMLAttributes, TextareaHTMLAttributes } from 'react';
import { ChevronDown } from 'lucide-react';
import { cn } from '../../lib/class-names';

export const controlStyles =
  'block w-full rounded-lg border border-slate-300 bg-white px-3 text-sm text-slate-900 shadow-sm placeholder:text-slate-500 ' +
  'focus:border-indigo-600 focus:outline-2 focus:outline-offset-0 focus:outline-indigo-600/30 ' +
  'disabled:cursor-not-allowed disabled:bg-slate-100 disabled:text-slate-600 ' +
  'aria-invalid:border-red-600 aria-invalid:focus:outline-red-600/30';

export function Input({ className, ...rest }: InputHTMLAttributes<HTMLInputElement>) {
  return <input className={cn(controlStyles, 'h-10', className)} {...rest} />;
}

export function Textarea({ className, ...rest }: TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <textarea className={cn(controlStyles, 'min-h-24 py-2', className)} {...rest} />;
}

interface SelectProps extends SelectHTMLAttributes<HTMLSelectElement> {
  wrapperClassName?: string;
}

export function Select({ className, wrapperClassName, children, ...rest }: SelectProps) {
  return (
    <span className={cn('relative block', wrapperClassName)}>
      <select className={cn(controlStyles, 'h-10 appearance-none pr-9', className)} {...rest}>
        {children}
      </select>
      <ChevronDown className="pointer-events-none absolute top-1/2 right-3 size-4 -translate-y-1/2 text-slate-500" aria-hidden="true" />
    </span>
  );
}
