/**
 * A short, readable excerpt of a response body that is not the JSON the client expected (a
 * proxy's or the CRM edge's HTML error page, often 5 KB): the page's title, or its text without
 * tags, at most `max` characters. Keeps messages and ledger rows small.
 */
export function bodySnippet(text: string, max = 300): string {
  let out = text;
  if (/<(!doctype|html|head|body|title)\b/i.test(text)) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1];
    out = title ?? text.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ').replace(/<!--[\s\S]*?-->/g, ' ').replace(/<[^>]+>/g, ' ');
    out = `HTML page: ${out}`;
  }
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > max ? `${out.slice(0, max)}… (${text.length} characters)` : out;
}
