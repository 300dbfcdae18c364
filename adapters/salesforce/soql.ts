/**
 * SOQL string literals, both ways: the adapter quotes external ids into `IN (...)` lists, the
 * fake unquotes them. Salesforce's escapes inside a quoted literal: \\ \' \" \n \r \t \b \f.
 */

const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

const UNESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  r: '\r',
  t: '\t',
  b: '\b',
  f: '\f',
};

/** A SOQL string literal for `value`, quotes included. Non-ASCII passes through untouched. */
export function soqlQuote(value: string): string {
  return `'${value.replace(/[\\'"\n\r\t\b\f]/g, (c) => ESCAPES[c]!)}'`;
}

/** `Field IN ('a','b')` for a non-empty list of values. */
export function soqlIn(field: string, values: readonly string[]): string {
  return `${field} IN (${values.map(soqlQuote).join(',')})`;
}

/** Field and object names are spliced into SOQL unquoted: accept API names only. */
export function isApiName(name: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_]*$/.test(name);
}

/**
 * Read a quoted literal starting at `text[start]` (which must be `'`). Returns the value and the
 * index after the closing quote, or null when the literal is not well formed.
 */
export function soqlUnquote(text: string, start: number): { value: string; end: number } | null {
  if (text[start] !== "'") return null;
  let out = '';
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") return { value: out, end: i + 1 };
    if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) return null;
      const mapped = UNESCAPES[next] ?? UNESCAPES[next.toLowerCase()];
      if (mapped === undefined) return null;
      out += mapped;
      i += 1;
      continue;
    }
    out += c;
  }
  return null;
}
