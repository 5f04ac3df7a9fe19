import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChunkFramer } from '../../src/simulator/chunk-text.js';
import {
  type ChunkContent,
  chunkObject,
  outputText,
  type ResponseMeta,
  usageBody,
  usageChunk,
} from '../../src/simulator/responses.js';

const frame = (obj: unknown): string => `data: ${JSON.stringify(obj)}\n\n`;

const metas: ResponseMeta[] = [
  { kind: 'chat', id: 'sim-7', created: 1_764_000_000, model: 'Qwen/Qwen3-0.6B' },
  { kind: 'completion', id: 'sim-8', created: 0, model: 'we"ird \\ mödel\n\u2028' },
];

const contents: ChunkContent[] = [
  { content: outputText(0, 1) },
  { role: true, content: outputText(0, 3) },
  { role: true, content: null },
  { reasoning: outputText(2, 4) },
  { role: true, reasoning: outputText(0, 1) },
  { content: outputText(5, 6), finishReason: 'length' },
  { content: '"quoted"\n\ttab\u0001', finishReason: null },
  { reasoning: 'r', content: 'c', finishReason: 'length' },
  { role: true, toolCall: { id: 'call_0123456789ab', name: 'get_weather', arguments: '{"text":" token' } },
  { toolCall: { arguments: ' the"}' }, finishReason: 'tool_calls' },
  {},
];

const usages = [null, usageBody(100, 32, 5, 0), usageBody(7, 0, 9, 4)];

test('chunk frames are byte-identical to JSON.stringify of chunkObject', () => {
  for (const meta of metas) {
    const framer = new ChunkFramer(meta);
    for (const c of contents) {
      for (const usage of usages) {
        assert.equal(
          framer.chunk(c, usage),
          frame(chunkObject(meta, c, usage)),
          JSON.stringify({ meta, c, usage }),
        );
      }
    }
  }
});

test('usage-only frames are byte-identical to JSON.stringify of usageChunk', () => {
  for (const meta of metas) {
    for (const usage of usages.slice(1)) {
      if (usage === null) continue;
      assert.equal(new ChunkFramer(meta).usage(usage), frame(usageChunk(meta, usage)));
    }
  }
});
