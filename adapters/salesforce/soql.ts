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

/** The SOQL subset the fake answers: `SELECT a, b FROM T [WHERE F IN ('x', ...) | WHERE F = 'x'] [LIMIT n]`. */
export interface SoqlSelect {
  fields: string[];
  sobject: string;
  where?: { field: string; values: string[] };
  limit?: number;
}

/** Parse the subset, or say where it stops making sense (Salesforce's MALFORMED_QUERY). */
export function parseSoqlSelect(q: string): SoqlSelect | { malformed: string } {
  const bad = (at: string) => ({ malformed: at.trim().slice(0, 40) || 'end of query' });
  const head = /^\s*SELECT\s+([\w\s,]+?)\s+FROM\s+(\w+)/i.exec(q);
  if (!head) return bad(q);
  const fields = head[1]!.split(',').map((f) => f.trim());
  if (fields.some((f) => !isApiName(f))) return bad(head[1]!);
  const out: SoqlSelect = { fields, sobject: head[2]! };
  let rest = q.slice(head[0].length);
  const where = /^\s+WHERE\s+(\w+)\s*(=|IN\b)\s*/i.exec(rest);
  if (where) {
    let i = where[0].length;
    const values: string[] = [];
    const literal = () => {
      while (rest[i] === ' ') i += 1;
      const lit = soqlUnquote(rest, i);
      if (lit) {
        values.push(lit.value);
        i = lit.end;
      }
      return lit !== null;
    };
    if (where[2] === '=') {
      if (!literal()) return bad(rest.slice(i));
    } else {
      if (rest[i] !== '(') return bad(rest.slice(i));
      i += 1;
      for (;;) {
        if (!literal()) return bad(rest.slice(i));
        while (rest[i] === ' ') i += 1;
        if (rest[i] === ')') break;
        if (rest[i] !== ',') return bad(rest.slice(i));
        i += 1;
      }
      i += 1;
    }
    out.where = { field: where[1]!, values };
    rest = rest.slice(i);
  } else if (/^\s+WHERE\b/i.test(rest)) return bad(rest);
  const tail = /^\s*(?:LIMIT\s+(\d+))?\s*$/i.exec(rest);
  if (!tail) return bad(rest);
  if (tail[1] !== undefined) out.limit = Number(tail[1]);
  return out;
}
