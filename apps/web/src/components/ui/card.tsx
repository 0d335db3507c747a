import type { HTMLAttributes, ReactNode } from 'react';
import { cn } from '../../lib/class-names';

export function Card({ className, ...rest }: HTMLAttributes<HTMLDivElement>) {
  return <div className={cn('rounded-xl border border-slate-200 bg-white shadow-sm', className)} {...rest} />;
}

export function CardHeader({ className, ...rest }: HTMLAttributes<HTMLDivElement>) {
  return <div className={cn('flex flex-col gap-1 border-b border-slate-200 px-5 py-4 sm:px-6', className)} {...rest} />;
}

interface CardTitleProps extends HTMLAttributes<HTMLHeadingElement> {
  /** Heading level, so the page outline stays correct wherever the card sits. */
  as?: 'h2' | 'h3';
}

export function CardTitle({ as: Heading = 'h2', className, ...rest }: CardTitleProps) {
  return <Heading className={cn('text-base font-semibold text-slate-900', className)} {...rest} />;
}

export function CardDescription({ className, ...rest }: HTMLAttributes<HTMLParagraphElement>) {
  return <p className={cn('text-sm text-slate-600', className)} {...rest} />;
}

export function CardContent({ className, ...rest }: HTMLAttributes<HTMLDivElement>) {
  return <div className={cn('px-5 py-5 sm:px-6', className)} {...rest} />;
}

export function CardFooter({ className, children }: { className?: string; children: ReactNode }) {
  return <div className={cn('flex flex-wrap items-center justify-end gap-3 border-t border-slate-200 px-5 py-4 sm:px-6', className)}>{children}</div>;
}
