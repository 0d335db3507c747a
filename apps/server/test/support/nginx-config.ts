// nginx cannot run where the tests run, so tests of deploy/nginx/herald.conf
// read it as nginx does: directives end with `;`, blocks are `{ … }`, `#`
// starts a comment outside quotes, quotes group words (and are taken off).
// Shared by security/deploy-files.test.ts and operations/deploy-files.test.ts.

export interface NginxDirective {
  name: string;
  args: string[];
  block?: NginxDirective[];
}

export function parseNginx(text: string): NginxDirective[] {
  const tokens: string[] = [];
  const pattern = /#[^\n]*|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([{};])|([^\s{};"'#]+)/g;
  for (const match of text.matchAll(pattern)) {
    if (match[0].startsWith('#')) continue;
    tokens.push(match[1] ?? match[2] ?? match[3] ?? match[4]!);
  }
  let position = 0;
  const parseBlock = (nested: boolean): NginxDirective[] => {
    const directives: NginxDirective[] = [];
    while (position < tokens.length) {
      if (tokens[position] === '}') {
        if (!nested) throw new Error('unbalanced }');
        position += 1;
        return directives;
      }
      const words: string[] = [];
      while (position < tokens.length && tokens[position] !== ';' && tokens[position] !== '{' && tokens[position] !== '}') words.push(tokens[position++]!);
      const end = tokens[position++];
      if (words.length === 0) throw new Error(`empty directive before ${end}`);
      const [name, ...args] = words as [string, ...string[]];
      if (end === '{') directives.push({ name, args, block: parseBlock(true) });
      else if (end === ';') directives.push({ name, args });
      else throw new Error(`directive ${name} not ended by ;`);
    }
    if (nested) throw new Error('unclosed {');
    return directives;
  };
  return parseBlock(false);
}

/** Every directive named `name`, at any depth, with the blocks it sits in (outermost first). */
export function findDirectives(directives: NginxDirective[], name: string, within: NginxDirective[] = []): Array<{ directive: NginxDirective; within: NginxDirective[] }> {
  return directives.flatMap((d) => [
    ...(d.name === name ? [{ directive: d, within }] : []),
    ...(d.block ? findDirectives(d.block, name, [...within, d]) : []),
  ]);
}
