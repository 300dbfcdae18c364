/**
 * Well-formed UTF-16: every surrogate paired. A string with a lone surrogate has no UTF-8 form,
 * so it cannot be sent, stored or compared faithfully.
 */

/** `String.prototype.isWellFormed` (Node 20; the TypeScript lib here predates ES2024). */
export function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text with each lone surrogate written as `\uD800`, safe to print and to encode. */
export function escapeLoneSurrogates(s: string): string {
  return isWellFormed(s) ? s : s.replace(LONE_SURROGATE, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
