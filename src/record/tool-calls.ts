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

/** The tool calls of one reply, built piece by piece, with the reply's content text. */
export class ToolCallAssembler {
  /** Content text of the reply so far (tool-call text excluded). */
  content = '';
  private readonly byIndex = new Map<number, ToolCall>();

  /** Folds one piece into its call (see the file comment for the rules). */
  add(piece: ToolCallPiece): void {
    const index = piece.index ?? this.byIndex.size;
    let call = this.byIndex.get(index);
    if (call === undefined) {
      call = { type: '', function: { name: '', arguments: '' } };
      this.byIndex.set(index, call);
    }
    if (piece.id !== '') call.id = piece.id;
    if (piece.type !== '') call.type = piece.type;
    if (piece.name !== '')
      call.function.name = piece.legacyName ? call.function.name + piece.name : piece.name;
    call.function.arguments += piece.arguments;
  }

  /** The reply: its content and its calls in `index` order, each `{id?, type, function}`. */
  reply(): ToolReply {
    const indexes = [...this.byIndex.keys()].sort((a, b) => a - b);
    const toolCalls = indexes.map((i): ToolCall => {
      const call = this.byIndex.get(i) as ToolCall;
      return {
        ...(call.id === undefined ? {} : { id: call.id }),
        type: call.type === '' ? DEFAULT_TYPE : call.type,
        function: { name: call.function.name, arguments: call.function.arguments },
      };
    });
    return { content: this.content, toolCalls };
  }
}
