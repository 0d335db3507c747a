// CSV (RFC 4180) for reports a site owner opens in a spreadsheet. A cell that
// starts with = + - @, a tab, a carriage return or NUL is a formula (or can be
// made one) to Excel, LibreOffice and Google Sheets: it is prefixed with an
// apostrophe so it shows as text (OWASP "CSV Injection"; docs/security.md,
// "Untrusted content"). Titles, error texts and user agents come from users
// and push services, so every cell goes through here.

const FORMULA_START = /^[=+\-@\t\r\0]/;

/** One cell: neutralised, then quoted when it holds a comma, a quote or a line break. */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'number' ? String(value) : value;
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A push key (base64url: letters, digits, `-` and `_`, as the server checked
 * it at subscribe time). No formula can be written with those characters, and
 * a leading apostrophe would corrupt the key for whoever imports the file (an
 * `auth` secret starts with `-` once in 64), so such a value is written as it
 * is. Anything else goes through csvCell.
 */
export function csvKeyCell(value: string): string {
  return /^[A-Za-z0-9_-]+$/.test(value) ? value : csvCell(value);
}

/** One line, CRLF-terminated as RFC 4180 says. */
export function csvLine(values: ReadonlyArray<string | number | null | undefined>): string {
  return csvRow(values.map(csvCell));
}

/** One line of cells already written by csvCell or csvKeyCell. */
export function csvRow(cells: readonly string[]): string {
  return `${cells.join(',')}\r\n`;
}
