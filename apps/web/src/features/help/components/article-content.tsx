import { Check, X } from 'lucide-react';
import { Fragment } from 'react';
import { CodeBlock } from '../../../components/ui';
import { parseArticleMarkup, parseInline, type ListItem } from '../article-markup';

function InlineText({ text }: { text: string }) {
  return (
    <>
      {parseInline(text).map((run, i) =>
        run.kind === 'bold' ? (
          <strong key={i} className="font-semibold text-slate-900">
            {run.text}
          </strong>
        ) : run.kind === 'code' ? (
          <code key={i} className="rounded bg-slate-100 px-1 py-0.5 font-mono text-[0.85em] text-slate-800">
            {run.text}
          </code>
        ) : (
          <Fragment key={i}>{run.text}</Fragment>
        ),
      )}
    </>
  );
}

function Items({ items }: { items: ListItem[] }) {
  return (
    <>
      {items.map((item, i) => (
        <li key={i} className="pl-1">
          <InlineText text={item.text} />
          {item.children.length ? (
            <ul className="mt-1 list-disc space-y-1 pl-5">
              {item.children.map((child, j) => (
                <li key={j}>
                  <InlineText text={child} />
                </li>
              ))}
            </ul>
          ) : null}
        </li>
      ))}
    </>
  );
}

/** Renders a help article's text (see article-markup.ts) as React elements; nothing is read as HTML. */
export function ArticleContent({ source }: { source: string }) {
  return (
    <div className="flex flex-col gap-4 text-sm leading-relaxed text-slate-700 sm:text-[0.9375rem]">
      {parseArticleMarkup(source).map((block, i) => {
        switch (block.kind) {
          case 'heading':
            return (
              <h3 key={i} className="mt-2 text-base font-semibold text-slate-900">
                <InlineText text={block.text} />
              </h3>
            );
          case 'paragraph':
            return (
              <p key={i} className="break-words">
                <InlineText text={block.text} />
              </p>
            );
          case 'bullets':
            return (
              <ul key={i} className="list-disc space-y-1.5 pl-5 marker:text-indigo-600">
                <Items items={block.items} />
              </ul>
            );
          case 'steps':
            return (
              <ol key={i} className="list-decimal space-y-1.5 pl-5 marker:font-semibold marker:text-indigo-700">
                <Items items={block.items} />
              </ol>
            );
          case 'checks':
            return (
              <ul key={i} className="flex flex-col gap-1.5">
                {block.items.map((item, j) => (
                  <li key={j} className="flex gap-2 break-words">
                    {item.ok ? (
                      <Check className="mt-0.5 size-4 shrink-0 text-emerald-700" role="img" aria-label="Yes" />
                    ) : (
                      <X className="mt-0.5 size-4 shrink-0 text-red-700" role="img" aria-label="No" />
                    )}
                    <span className="min-w-0">
                      <InlineText text={item.text} />
                    </span>
                  </li>
                ))}
              </ul>
            );
          case 'code':
            return <CodeBlock key={i} code={block.code} label="Code example" />;
        }
      })}
    </div>
  );
}
