// Dates as feeds really write them. RSS asks for RFC 822 (with RFC 1123's
// four-digit years), Atom and Dublin Core for ISO 8601 / RFC 3339; publishers
// also send named zones (EST, CEST…), no weekday, two-digit years, date-only
// values, "2020/1/10 14:33:00" and localised day and month names ("Seg, 24 Set
// 2018"). Anything that cannot be read is null: a date never fails a feed.

const MONTHS: Record<string, number> = {};
function months(names: string[][]): void {
  names.forEach((aliases, index) => {
    for (const alias of aliases) MONTHS[alias] = index;
  });
}
// English, Portuguese, Spanish, German, French, Dutch and Italian names and
// their usual abbreviations, compared without accents and case.
months([
  ['jan', 'january', 'janeiro', 'ene', 'enero', 'januar', 'janv', 'janvier', 'januari', 'gen', 'gennaio'],
  ['feb', 'february', 'fev', 'fevereiro', 'febrero', 'februar', 'fevr', 'fevrier', 'februari', 'febbraio'],
  ['mar', 'march', 'marco', 'marzo', 'marz', 'maerz', 'mars', 'maart', 'mrt'],
  ['apr', 'april', 'abr', 'abril', 'avr', 'avril', 'aprile'],
  ['may', 'mai', 'maio', 'mayo', 'mei', 'mag', 'maggio'],
  ['jun', 'june', 'junho', 'junio', 'juni', 'juin', 'giu', 'giugno'],
  ['jul', 'july', 'julho', 'julio', 'juli', 'juil', 'juillet', 'lug', 'luglio'],
  ['aug', 'august', 'ago', 'agosto', 'aout', 'augustus'],
  ['sep', 'sept', 'september', 'set', 'setembro', 'septiembre', 'setiembre', 'septembre', 'settembre'],
  ['oct', 'october', 'out', 'outubro', 'octubre', 'okt', 'oktober', 'octobre', 'ott', 'ottobre'],
  ['nov', 'november', 'novembro', 'noviembre', 'novembre'],
  ['dec', 'december', 'dez', 'dezembro', 'dic', 'diciembre', 'dezember', 'decembre', 'dicembre'],
]);

/** Offsets in minutes east of UTC for the zone names feeds use (RFC 822 §5.1 plus common ones). */
const ZONES: Record<string, number> = {
  ut: 0, utc: 0, gmt: 0, z: 0, wet: 0,
  est: -300, edt: -240, cst: -360, cdt: -300, mst: -420, mdt: -360, pst: -480, pdt: -420,
  akst: -540, akdt: -480, hst: -600, ast: -240, adt: -180, nst: -210, ndt: -150,
  bst: 60, ist: 330, cet: 60, cest: 120, met: 60, mest: 120, west: 60, eet: 120, eest: 180, msk: 180,
  brt: -180, brst: -120, art: -180,
  jst: 540, kst: 540, hkt: 480, sgt: 480, awst: 480, acst: 570, acdt: 630, aest: 600, aedt: 660, nzst: 720, nzdt: 780,
};

function fold(word: string): string {
  return word
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
}

function monthIndex(word: string): number | undefined {
  const w = fold(word);
  return MONTHS[w] ?? MONTHS[w.slice(0, 4)] ?? MONTHS[w.slice(0, 3)];
}

/** Minutes east of UTC, undefined when the text is not a zone. Unknown letters count as UTC (RFC 2822 §4.3). */
function zoneOffset(raw: string): number | undefined {
  const text = raw.trim().replace(/\s*\(.*\)$/, '');
  if (text === '') return 0;
  const numeric = /^(?:(?:gmt|utc|ut)\s*)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(text);
  if (numeric) {
    const minutes = Number(numeric[2]) * 60 + Number(numeric[3] ?? 0);
    if (minutes > 18 * 60) return undefined;
    return numeric[1] === '-' ? -minutes : minutes;
  }
  if (/^[a-z]{1,5}$/i.test(text)) return ZONES[text.toLowerCase()] ?? 0;
  return undefined;
}

function fullYear(year: string): number {
  const y = Number(year);
  // RFC 2822 §4.3: two-digit years below 50 are 20xx, others 19xx; three digits add 1900.
  if (year.length === 2) return y < 50 ? 2000 + y : 1900 + y;
  if (year.length === 3) return 1900 + y;
  return y;
}

function utc(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number, offsetMinutes: number): number | null {
  if (month < 0 || month > 11 || day < 1 || hour > 24 || minute > 59 || second > 60) return null;
  if (year < 1900 || year > 2200) return null;
  const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  return Date.UTC(year, month, day, hour, minute, Math.min(second, 59), ms) - offsetMinutes * 60_000;
}

function to24Hour(hour: number, meridiem: string | undefined): number {
  if (!meridiem) return hour;
  const pm = meridiem.toLowerCase().startsWith('p');
  if (hour === 12) return pm ? 12 : 0;
  return pm ? hour + 12 : hour;
}

// 2017-06-26T10:00:00.123-07:00, 2019-08-14, 2017-06-26 10:00, 2020/1/10 14:33:00
const ISO_LIKE = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T\s]+(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*([ap]\.?m\.?)?)?\s*(.*)$/i;
// [Weekday,] 02 Oct 2002 [13:00[:00]] [zone]   (RFC 822 §5, any language)
const DAY_MONTH_YEAR = /^(?:[^\d\s,]+\.?,?\s+)?(\d{1,2})(?:\.|st|nd|rd|th)?[\s-]+([^\d\s,.-]+)\.?,?[\s-]+(\d{2,4}),?(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?)?\s*(.*)$/i;
// [Weekday,] October 2, 2002 [1:00 PM] [zone]
const MONTH_DAY_YEAR = /^(?:[^\d\s,]+\.?,?\s+)?([^\d\s,.]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4}),?(?:\s+(?:at\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?)?\s*(.*)$/i;
// Wed Oct 02 13:00:00 GMT 2002 (asctime-like, as JavaScript's Date.toString writes)
const ASCTIME = /^[^\d\s,]+,?\s+([^\d\s,.]+)\s+(\d{1,2})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s+(?:([a-z]{1,5}|[+-]\d{4}|(?:gmt|utc)[+-]\d{2}:?\d{2})\s+)?(\d{4})(?:\s*\(.*\))?$/i;

/** Milliseconds since the epoch, or null when the text is not a date this parser can trust. */
export function parseFeedDate(raw: string | null | undefined): number | null {
  if (!raw) return null;
  const text = raw.replace(/\s+/g, ' ').trim();
  if (text === '' || text.length > 100) return null;

  const iso = ISO_LIKE.exec(text);
  if (iso) {
    const offset = zoneOffset(iso[9] ?? '');
    if (offset === undefined) return null;
    const ms = iso[7] ? Math.round(Number(`0.${iso[7]}`) * 1000) : 0;
    return utc(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3]), to24Hour(Number(iso[4] ?? 0), iso[8]), Number(iso[5] ?? 0), Number(iso[6] ?? 0), ms, offset);
  }

  const dmy = DAY_MONTH_YEAR.exec(text);
  if (dmy) {
    const month = monthIndex(dmy[2] ?? '');
    const offset = zoneOffset(dmy[8] ?? '');
    if (month === undefined || offset === undefined) return null;
    return utc(fullYear(dmy[3] ?? ''), month, Number(dmy[1]), to24Hour(Number(dmy[4] ?? 0), dmy[7]), Number(dmy[5] ?? 0), Number(dmy[6] ?? 0), 0, offset);
  }

  const mdy = MONTH_DAY_YEAR.exec(text);
  if (mdy) {
    const month = monthIndex(mdy[1] ?? '');
    const offset = zoneOffset(mdy[8] ?? '');
    if (month === undefined || offset === undefined) return null;
    return utc(Number(mdy[3]), month, Number(mdy[2]), to24Hour(Number(mdy[4] ?? 0), mdy[7]), Number(mdy[5] ?? 0), Number(mdy[6] ?? 0), 0, offset);
  }

  const asc = ASCTIME.exec(text);
  if (asc) {
    const month = monthIndex(asc[1] ?? '');
    const offset = zoneOffset(asc[6] ?? '');
    if (month === undefined || offset === undefined) return null;
    return utc(Number(asc[7]), month, Number(asc[2]), Number(asc[3]), Number(asc[4]), Number(asc[5] ?? 0), 0, offset);
  }
  return null;
}
