/**
 * Safe embedding of text and data in a generated HTML page.
 */

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` with `& < > " '` escaped, safe in element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON text safe inside a `<script type="application/json">` element: `<` becomes `\u003c` (so no
 * `</script>` or `<!--` can appear) and the JS line separators U+2028/U+2029 are escaped.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** JavaScript source safe inside a `<script>` element (any `</script` is split). */
export function scriptSource(source: string): string {
  return source.replace(/<\/script/gi, '<\\/script');
}
