/**
 * Reassembly of a live chat reply's tool calls from the pieces its response objects carry, for the
 * history of a `deltas_without_responses` session (AIPerf's semantics, reference §2.1 "delta
 * sessions"): streamed `tool_calls` deltas are keyed by their `index`; a call's `id`, `type` and
 * `function.name` take the latest non-empty value sent, its `function.arguments` are concatenated
 * in arrival order; a piece without `index` opens a call of its own (so parallel calls never merge).
 * The legacy `function_call` form is normalised to a `function` tool call: streamed, its pieces build
 * call 0 (name and arguments both concatenated); in a whole answer it is one more call.
 *
 * Only the events that carry tool calls reach this (record builder, client/record-builder.ts); an
 * answer without them costs nothing here.
 */
import type { ToolCall, ToolReply } from './types.js';

/** One tool call piece of one response object (endpoint/chat.ts reads them from `choices[0]`). */
export interface ToolCallPiece {
  /** The call's `index`; undefined when the server sent none (the piece then opens a new call). */
  index: number | undefined;
  /**
   * `id`, `type`, `function.name`: '' when absent or not a string; `function.arguments`: the string,
   * or the JSON text of an object sent instead, '' when absent.
   */
  id: string;
  type: string;
  name: string;
  arguments: string;
  /** A streamed legacy `function_call`: its name is concatenated too, as its arguments are. */
  legacyName?: true;
}

/** Type a call gets when the server sent none. */
const DEFAULT_TYPE = 'function';

/**
 * The text a sequence of pieces adds up to: their concatenation, or, when they are cumulative (each
 * non-empty piece begins with the whole piece before it, and they grow through at least `minPieces`
 * distinct texts, as a stream that repeats the reply so far sends them: FORMAT.md §6.1), the last
 * one. A repeated piece is allowed there: an event that only grows a tool call repeats the content.
 */
function joined(pieces: readonly string[], minPieces: number): { text: string; cumulative: boolean } {
  const nonEmpty = pieces.filter((p) => p !== '');
  let distinct = nonEmpty.length === 0 ? 0 : 1;
  let extends_ = true;
  for (let i = 1; i < nonEmpty.length && extends_; i++) {
    const [before, piece] = [nonEmpty[i - 1] as string, nonEmpty[i] as string];
    extends_ = piece.startsWith(before);
    if (piece.length > before.length) distinct++;
  }
  const last = nonEmpty[nonEmpty.length - 1] ?? '';
  if (extends_ && distinct >= minPieces) return { text: last, cumulative: true };
  return { text: nonEmpty.join(''), cumulative: false };
}

/** A call as it is built: the latest `id`, `type` and name, and every `arguments` piece. */
interface CallPieces {
  id?: string;
  type: string;
  name: string;
  arguments: string[];
}

/**
 * The tool calls of one reply, built piece by piece, with the reply's content text. A reply whose
 * content or a call's arguments come cumulative (each piece the whole text so far) is joined as the
 * text so far, not repeated ({@link ToolCallAssembler.cumulative}).
 */
export class ToolCallAssembler {
  private readonly contentPieces: string[] = [];
  private readonly byIndex = new Map<number, CallPieces>();
  /** Whether {@link reply} found the content or some call's arguments cumulative. */
  cumulative = false;

  /** @param minPieces pieces a text needs before it can be judged cumulative (stream-integrity.ts). */
  constructor(private readonly minPieces: number) {}

  /** Adds content text of the reply (tool-call text excluded), in arrival order. */
  addContent(text: string): void {
    if (text !== '') this.contentPieces.push(text);
  }

  /** Folds one piece into its call (see the file comment for the rules). */
  add(piece: ToolCallPiece): void {
    const index = piece.index ?? this.byIndex.size;
    let call = this.byIndex.get(index);
    if (call === undefined) {
      call = { type: '', name: '', arguments: [] };
      this.byIndex.set(index, call);
    }
    if (piece.id !== '') call.id = piece.id;
    if (piece.type !== '') call.type = piece.type;
    if (piece.name !== '') call.name = piece.legacyName ? call.name + piece.name : piece.name;
    if (piece.arguments !== '') call.arguments.push(piece.arguments);
  }

  /** The reply: its content and its calls in `index` order, each `{id?, type, function}`. */
  reply(): ToolReply {
    const content = joined(this.contentPieces, this.minPieces);
    this.cumulative = content.cumulative;
    const indexes = [...this.byIndex.keys()].sort((a, b) => a - b);
    const toolCalls = indexes.map((i): ToolCall => {
      const call = this.byIndex.get(i) as CallPieces;
      const args = joined(call.arguments, this.minPieces);
      if (args.cumulative) this.cumulative = true;
      return {
        ...(call.id === undefined ? {} : { id: call.id }),
        type: call.type === '' ? DEFAULT_TYPE : call.type,
        function: { name: call.name, arguments: args.text },
      };
    });
    return { content: content.text, toolCalls };
  }
}
