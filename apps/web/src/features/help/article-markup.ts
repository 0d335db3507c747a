// The help centre's small text format (spec §2: "a simple text renderer (bold
// headings, bullets, check and cross lines, code blocks)"). Parsed into
// blocks that React renders as elements: text is never treated as HTML.
//
//   ## Heading            (a line that is entirely **bold** is a heading too)
//   - bullet              (• also works)
//   1. numbered step      ("   - " lines right under an item nest one level)
//   ✓ something to do     ✗ something to avoid
//   ```                   code block, kept exactly as written
//   a paragraph; lines next to each other join; a blank line ends a block
//   inline **bold** and `code`

export interface ListItem {
  text: string;
  children: string[];
}

export type Block =
  | { kind: 'heading'; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'bullets'; items: ListItem[] }
  | { kind: 'steps'; items: ListItem[] }
  | { kind: 'checks'; items: Array<{ ok: boolean; text: string }> }
  | { kind: 'code'; code: string };

export type Inline = { kind: 'text' | 'bold' | 'code'; text: string };

const HEADING = /^#{1,6}\s+(.+)$/;
const BOLD_LINE = /^\*\*([^*]+)\*\*$/;
const BULLET = /^[-•]\s+(.+)$/;
const STEP = /^\d+[.)]\s+(.+)$/;
const NESTED = /^\s{2,}[-•]\s+(.+)$/;
const CHECK = /^([✓✔✗✘])\s*(.+)$/;
const FENCE = /^\s*(```|~~~)/;

export function parseArticleMarkup(source: string): Block[] {
  const blocks: Block[] = [];
  const lines = source.replace(/\r\n/g, '\n').split('\n');
  let open: Block | null = null;
  const close = () => {
    if (open) blocks.push(open);
    open = null;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      close();
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(fence[1]!); i++) code.push(lines[i]!);
      blocks.push({ kind: 'code', code: code.join('\n') });
      continue;
    }
    const trimmed = line.trim();
    if (!trimmed) {
      close();
      continue;
    }
    const nested = NESTED.exec(line);
    const current = open as Block | null;
    if (nested && current && (current.kind === 'bullets' || current.kind === 'steps')) {
      current.items[current.items.length - 1]!.children.push(nested[1]!.trim());
      continue;
    }
    const heading = HEADING.exec(trimmed) ?? BOLD_LINE.exec(trimmed);
    if (heading) {
      close();
      blocks.push({ kind: 'heading', text: heading[1]!.trim() });
      continue;
    }
    const check = CHECK.exec(trimmed);
    if (check) {
      if (current?.kind !== 'checks') {
        close();
        open = { kind: 'checks', items: [] };
      }
      (open as Extract<Block, { kind: 'checks' }>).items.push({ ok: check[1] === '✓' || check[1] === '✔', text: check[2]!.trim() });
      continue;
    }
    const bullet = BULLET.exec(trimmed);
    const step = bullet ? null : STEP.exec(trimmed);
    if (bullet || step) {
      const kind = bullet ? 'bullets' : 'steps';
      if (current?.kind !== kind) {
        close();
        open = { kind, items: [] };
      }
      (open as Extract<Block, { kind: 'bullets' | 'steps' }>).items.push({ text: (bullet ?? step)![1]!.trim(), children: [] });
      continue;
    }
    if (current?.kind === 'paragraph') {
      current.text = `${current.text} ${trimmed}`;
    } else {
      close();
      open = { kind: 'paragraph', text: trimmed };
    }
  }
  close();
  return blocks;
}

/** Splits a line into plain text, **bold** and `code` runs. */
export function parseInline(text: string): Inline[] {
  const runs: Inline[] = [];
  const pattern = /\*\*([^*]+)\*\*|`([^`]+)`/g;
  let last = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    if (match.index > last) runs.push({ kind: 'text', text: text.slice(last, match.index) });
    runs.push(match[1] !== undefined ? { kind: 'bold', text: match[1] } : { kind: 'code', text: match[2]! });
    last = match.index + match[0].length;
  }
  if (last < text.length) runs.push({ kind: 'text', text: text.slice(last) });
  return runs;
}

/** The article as plain words (search snippets): markup characters removed. */
export function plainText(source: string): string {
  return source
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/[#*`]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
