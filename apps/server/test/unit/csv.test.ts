import { describe, expect, it } from 'vitest';
import { csvCell, csvKeyCell, csvLine } from '../../src/platform/csv';

// RFC 4180 cells, and OWASP's CSV-injection rule: a cell starting with
// = + - @, a tab, a carriage return or NUL is prefixed with an apostrophe.
describe('CSV cells', () => {
  it('prefixes every formula start with an apostrophe', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r', '\0']) expect(csvCell(`${start}1+1`).replace(/^"|"$/g, '')).toBe(`'${start}1+1`);
  });

  it('quotes commas, quotes and line breaks, and leaves plain text and numbers alone', () => {
    expect(csvCell('Chrome')).toBe('Chrome');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvLine(['=cmd', 'ok', 5])).toBe(`'=cmd,ok,5\r\n`);
  });

  it('writes a base64url push key as it is (a leading - stays: the key must survive an import), and neutralises anything else', () => {
    expect(csvKeyCell('-Zq3_Ab9')).toBe('-Zq3_Ab9');
    expect(csvKeyCell('BOr4Ds-kq_x')).toBe('BOr4Ds-kq_x');
    expect(csvKeyCell('-1+1')).toBe("'-1+1");
    expect(csvKeyCell('=HYPERLINK("http://evil.example")')).toBe(`"'=HYPERLINK(""http://evil.example"")"`);
    expect(csvKeyCell('https://fcm.googleapis.com/fcm/send/abc')).toBe('https://fcm.googleapis.com/fcm/send/abc');
  });
});
