/**
 * Text from a file as an error message may quote it: control characters (C0, DEL, C1) and the
 * replacement character of undecodable bytes written as escapes, so binary input never reaches the
 * terminal raw (where it can garble or reprogram it).
 */

/** True for C0 controls other than tab and newline, DEL, C1 controls and U+FFFD. */
function unprintable(code: number): boolean {
  if (code === 0x09 || code === 0x0a) return false;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0xfffd;
}

/** `text` with every unprintable character as `\xNN` (`\uFFFD` for a byte that was not UTF-8). */
export function printable(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!unprintable(code)) continue;
    out += text.slice(from, i) + (code > 0xff ? '\\uFFFD' : `\\x${code.toString(16).padStart(2, '0')}`);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * A hint for a file whose first line starts with the gzip magic bytes (1f 8b; RFC 1952 §2.3.1), as
 * read as UTF-8; '' otherwise.
 */
export function compressedHint(firstLine: string): string {
  return firstLine.startsWith('\u001f\ufffd')
    ? ' (the file looks gzip-compressed: decompress it first, e.g. gunzip -k FILE)'
    : '';
}
