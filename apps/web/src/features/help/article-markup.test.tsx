import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { parseArticleMarkup, parseInline } from './article-markup';
import { ArticleContent } from './components/article-content';

const source = [
  '## Getting ready',
  'First line of a paragraph',
  'joins the second.',
  '',
  '**A bold line is a heading**',
  '- one bullet',
  '• another bullet',
  '',
  '1. First step',
  '   - a detail of step one',
  '2. Second step',
  '',
  '✓ Do this',
  '✗ Not that',
  '',
  '```',
  '<script src="https://herald.example.com/sdk/herald.js" async></script>',
  '  indented **not bold**',
  '```',
  'Use **bold** and `code` inline.',
].join('\n');

describe('help article markup (spec §2: bold headings, bullets, check and cross lines, code blocks)', () => {
  it('parses every kind of block', () => {
    expect(parseArticleMarkup(source)).toEqual([
      { kind: 'heading', text: 'Getting ready' },
      { kind: 'paragraph', text: 'First line of a paragraph joins the second.' },
      { kind: 'heading', text: 'A bold line is a heading' },
      { kind: 'bullets', items: [{ text: 'one bullet', children: [] }, { text: 'another bullet', children: [] }] },
      { kind: 'steps', items: [{ text: 'First step', children: ['a detail of step one'] }, { text: 'Second step', children: [] }] },
      { kind: 'checks', items: [{ ok: true, text: 'Do this' }, { ok: false, text: 'Not that' }] },
      { kind: 'code', code: '<script src="https://herald.example.com/sdk/herald.js" async></script>\n  indented **not bold**' },
      { kind: 'paragraph', text: 'Use **bold** and `code` inline.' },
    ]);
  });

  it('splits inline bold and code', () => {
    expect(parseInline('a **b** c `d` e')).toEqual([
      { kind: 'text', text: 'a ' },
      { kind: 'bold', text: 'b' },
      { kind: 'text', text: ' c ' },
      { kind: 'code', text: 'd' },
      { kind: 'text', text: ' e' },
    ]);
    expect(parseInline('no markup')).toEqual([{ kind: 'text', text: 'no markup' }]);
  });

  it('renders headings, lists, check and cross lines and code as elements', () => {
    const { container } = render(<ArticleContent source={source} />);
    expect(screen.getAllByRole('heading', { level: 3 }).map((h) => h.textContent)).toEqual(['Getting ready', 'A bold line is a heading']);
    expect(screen.getByText('First line of a paragraph joins the second.').tagName).toBe('P');
    const lists = screen.getAllByRole('list');
    expect(container.querySelector('ol')).toHaveTextContent('First stepa detail of step oneSecond step');
    expect(lists.some((l) => l.textContent === 'one bulletanother bullet')).toBe(true);
    expect(screen.getByRole('img', { name: 'Yes' }).parentElement).toHaveTextContent('Do this');
    expect(screen.getByRole('img', { name: 'No' }).parentElement).toHaveTextContent('Not that');
    const code = within(screen.getByRole('figure', { name: 'Code example' })).getByText(/herald\.js/);
    expect(code.tagName).toBe('CODE');
    expect(code.textContent).toContain('indented **not bold**');
    expect(screen.getByText('bold').tagName).toBe('STRONG');
    expect(screen.getByText('code').tagName).toBe('CODE');
  });

  it('never turns text into HTML', () => {
    const { container } = render(<ArticleContent source={'<img src=x onerror="alert(1)"> <script>alert(2)</script>\n\n- <b>not bold</b>'} />);
    expect(container.querySelector('img, script, b')).toBeNull();
    expect(container).toHaveTextContent('<img src=x onerror="alert(1)"> <script>alert(2)</script>');
    expect(container).toHaveTextContent('<b>not bold</b>');
  });
});
