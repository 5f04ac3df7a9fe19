/**
 * SSE text of one chat/completions response's chunks, from a template built once per response: the
 * `id`/`object`/`created`/`model` head is serialized when the response starts and each chunk only
 * adds its choice, instead of building and `JSON.stringify`-ing a whole object per chunk. The bytes
 * equal `data: ${JSON.stringify(chunkObject(...))}\n\n` (and the same for `usageChunk`);
 * `test/unit/sim-chunk-text.test.ts` checks that on every chunk shape.
 */
import { type ChunkContent, type ResponseMeta, toolCallDeltas, type UsageBody } from './responses.js';

/** Builds the `data: …\n\n` frames of one response (same bytes as `chunkObject` / `usageChunk`). */
export class ChunkFramer {
  /** `data: {"id":…,"object":…,"created":…,"model":…,"choices":[` */
  private readonly head: string;
  private readonly chat: boolean;

  constructor(meta: ResponseMeta) {
    this.chat = meta.kind === 'chat';
    const object = this.chat ? 'chat.completion.chunk' : 'text_completion';
    this.head =
      `data: {"id":${JSON.stringify(meta.id)},"object":"${object}"` +
      `,"created":${JSON.stringify(meta.created)},"model":${JSON.stringify(meta.model)},"choices":[`;
  }

  /** The frame of one chunk, with the running usage when `usage` is not null. */
  chunk(c: ChunkContent, usage: UsageBody | null): string {
    const finish =
      c.finishReason === undefined || c.finishReason === null ? 'null' : JSON.stringify(c.finishReason);
    const end = usage === null ? '}\n\n' : `,"usage":${JSON.stringify(usage)}}\n\n`;
    return `${this.head}{"index":0,${this.choiceBody(c)},"logprobs":null,"finish_reason":${finish}}]${end}`;
  }

  /**
   * The usage-only frame sent after the last token (`choices: []`), with `extra` top-level fields
   * after `usage` (the server's own timing) when given.
   */
  usage(usage: UsageBody, extra: Readonly<Record<string, unknown>> | null = null): string {
    let tail = '';
    if (extra !== null)
      for (const key in extra) tail += `,${JSON.stringify(key)}:${JSON.stringify(extra[key])}`;
    return `${this.head}],"usage":${JSON.stringify(usage)}${tail}}\n\n`;
  }

  private choiceBody(c: ChunkContent): string {
    if (!this.chat) return `"text":${JSON.stringify(c.content ?? c.reasoning ?? '')}`;
    let fields = '';
    if (c.role === true) fields = '"role":"assistant"';
    if (c.reasoning !== undefined)
      fields += `${fields === '' ? '' : ','}"reasoning_content":${JSON.stringify(c.reasoning)}`;
    if (c.content !== undefined)
      fields += `${fields === '' ? '' : ','}"content":${JSON.stringify(c.content)}`;
    if (c.toolCall !== undefined)
      fields += `${fields === '' ? '' : ','}"tool_calls":${JSON.stringify(toolCallDeltas(c.toolCall))}`;
    return `"delta":{${fields}}`;
  }
}
