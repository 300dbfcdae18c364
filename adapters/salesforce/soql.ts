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

/** `'a','b'`: the inside of an IN list. */
export function soqlList(values: readonly string[]): string {
  return values.map(soqlQuote).join(',');
}

/** `Field IN ('a','b')` for a non-empty list of values. */
export function soqlIn(field: string, values: readonly string[]): string {
  return `${field} IN (${soqlList(values)})`;
}

/** Field and object names are spliced into SOQL unquoted: accept API names only. */
export function isApiName(name: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_]*$/.test(name);
}

/** A field of the queried sObject or of a parent through one lookup: `Email`, `Account.AI_External_Id__c`. */
export function isFieldPath(path: string): boolean {
  const parts = path.split('.');
  return parts.length <= 2 && parts.every(isApiName);
}

/**
 * The request target of a query as it goes on the wire: `encodeURIComponent`, then `'` as `%27`.
 * jsforce's own `query()` sends `?q=${encodeURIComponent(soql)}` (lib/query.js) and node-fetch 2
 * runs the URL through the WHATWG parser, which escapes `'` in a query and leaves `%XX` alone:
 * the bytes Salesforce receives are exactly these (UTF-8, every non-ASCII byte as `%XX`).
 */
export function queryUrl(apiBase: string, soql: string): string {
  return `${apiBase}/query?q=${wireText(soql)}`;
}

const wireText = (text: string) => encodeURIComponent(text).replace(/'/g, '%27');
/** Bytes on the wire: a CJK character is 9 (`%E4%B8%AD`), an emoji 12. */
const wireBytes = (text: string) => Buffer.byteLength(wireText(text), 'utf8');

/** The size in bytes of a query's URL (`queryUrl`) as sent: what Salesforce's 16,384-byte URI limit counts. */
export function queryUrlBytes(apiBase: string, soql: string): number {
  return Buffer.byteLength(queryUrl(apiBase, soql), 'utf8');
}

/**
 * Split `values` into groups whose query `${head}${soqlList(group)}${tail}` has a URL (`queryUrl`) of
 * at most `maxBytes` bytes as sent, order kept, each group as full as it can be. Values `skip` says
 * are never sent cost nothing and ride in whatever group they fall in; a value that alone does not
 * fit still gets a group of its own (callers that must not send it skip it).
 */
export function groupsForUrl(apiBase: string, head: string, tail: string, values: readonly string[], maxBytes: number, skip: (value: string) => boolean = () => false): string[][] {
  const fixed = queryUrlBytes(apiBase, `${head}${tail}`);
  const separator = wireBytes(',');
  const groups: string[][] = [];
  let current: string[] = [];
  let length = fixed;
  let sent = 0;
  for (const v of values) {
    const cost = skip(v) ? 0 : wireBytes(soqlQuote(v));
    if (cost > 0 && sent > 0 && length + separator + cost > maxBytes) {
      groups.push(current);
      current = [];
      length = fixed;
      sent = 0;
    }
    current.push(v);
    if (cost > 0) {
      length += cost + (sent > 0 ? separator : 0);
      sent += 1;
    }
  }
  if (current.length > 0) groups.push(current);
  return groups;
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

/** The SOQL subset the fake answers: `SELECT a, Parent.b FROM T [WHERE F IN ('x', ...) | WHERE F = 'x'] [LIMIT n]`. */
export interface SoqlSelect {
  fields: string[];
  sobject: string;
  where?: { field: string; values: string[] };
  limit?: number;
}

/** Parse the subset, or say where it stops making sense (Salesforce's MALFORMED_QUERY). */
export function parseSoqlSelect(q: string): SoqlSelect | { malformed: string } {
  const bad = (at: string) => ({ malformed: at.trim().slice(0, 40) || 'end of query' });
  const head = /^\s*SELECT\s+([\w\s,.]+?)\s+FROM\s+(\w+)/i.exec(q);
  if (!head) return bad(q);
  const fields = head[1]!.split(',').map((f) => f.trim());
  if (fields.some((f) => !isFieldPath(f))) return bad(head[1]!);
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
