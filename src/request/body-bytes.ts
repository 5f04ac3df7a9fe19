/**
 * A request body's UTF-8 bytes, built so that a long synthesized prompt is copied once, straight
 * from its pieces (prompt/synthesizer.ts {@link PromptPieces}) into the buffer: the body object is
 * serialized with a short placeholder where the prompt goes, and the pieces are written in the
 * placeholder's place. The usual path (join the pieces, `JSON.stringify` the body, encode the JSON
 * to UTF-8) copies a 120k-token prompt three times and keeps two ~800 KB strings on the JS heap;
 * this one writes the bytes once, outside the heap.
 *
 * Exact by construction: the pieces are printable ASCII without a quote or backslash, so the JSON
 * string value they form is their characters as they are, and so are its UTF-8 bytes. The
 * placeholder starts with a NUL character (escaped in JSON, so no prompt text or user value meets
 * it by chance); when it is not found exactly once in the serialized body (an adapter that copies
 * or drops the message text), the body is built the usual way.
 */

/** The message content that stands for the prompt's pieces until the body is encoded. */
export const PROMPT_PLACEHOLDER = '\u0000tokenload:prompt\u0000';

/** The placeholder as it appears inside the serialized body. */
const PLACEHOLDER_JSON = JSON.stringify(PROMPT_PLACEHOLDER).slice(1, -1);

/**
 * The UTF-8 bytes of `JSON.stringify(body)` with the placeholder replaced by the pieces' text.
 * `rebuild` gives the body with the real text in place of the placeholder; it is called only when
 * the placeholder is not found exactly once in `body`'s JSON.
 */
export function bodyWithPromptBytes(
  body: unknown,
  pieces: readonly string[],
  rebuild: (promptText: string) => unknown,
): Buffer {
  const json = JSON.stringify(body);
  const at = json.indexOf(PLACEHOLDER_JSON);
  if (at < 0 || json.includes(PLACEHOLDER_JSON, at + PLACEHOLDER_JSON.length)) {
    return Buffer.from(JSON.stringify(rebuild(pieces.join(''))), 'utf8');
  }
  const head = json.slice(0, at);
  const tail = json.slice(at + PLACEHOLDER_JSON.length);
  let size = Buffer.byteLength(head, 'utf8') + Buffer.byteLength(tail, 'utf8');
  for (const piece of pieces) size += piece.length;
  const out = Buffer.allocUnsafe(size);
  let offset = out.write(head, 0, 'utf8');
  for (const piece of pieces) offset += out.write(piece, offset, 'latin1');
  out.write(tail, offset, 'utf8');
  return out;
}
