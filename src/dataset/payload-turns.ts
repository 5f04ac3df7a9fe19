/**
 * Shared by the verbatim-replay formats (`inputs_json`, `raw_payload`; AIPerf's docs
 * tutorials/inputs-json-replay.md and raw-payload-replay.md): a request body read from a file becomes
 * a turn whose prompt is that body, sent as written, and a list of bodies becomes one conversation
 * whose turns are sent in order, each self-contained (`message_array_with_responses`: a body already
 * holds the history it needs; nothing is accumulated and no live reply is injected).
 */

import { type Conversation, DatasetError, type SourceRef, type Turn } from './types.js';
import { describeValue } from './validate.js';

/**
 * The turn of one request body.
 * @param where how an error names the body besides its file and line (e.g. `data[0].payloads[1]`).
 * @throws {DatasetError} naming file, line and `where` when the body is not a JSON object.
 */
export function payloadTurn(body: unknown, index: number, at: SourceRef, where: string): Turn {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const message = `${at.file}:${at.line}: ${where}: expected a request body (a JSON object), got ${describeValue(body)}`;
    throw new DatasetError(message, at.file, at.line, where);
  }
  return { index, prompt: { kind: 'payload', payload: body as Record<string, unknown> }, source: at };
}

/** A conversation of verbatim bodies, sent in order, each as written. */
export function payloadConversation(id: string, turns: Turn[]): Conversation {
  return { id, turns, contextMode: 'message_array_with_responses' };
}
