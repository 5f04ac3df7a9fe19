/**
 * The `image_generation` endpoint through its adapter: AIPerf's body (prompt, model, b64_json,
 * n = 1, stream only when streaming, extras last), whole and streamed answers that count as
 * answered with no text, the completed event ending a stream, and error bodies.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { imageGeneration } from '../../src/endpoint/image-generation.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import type { BodyInput } from '../../src/endpoint/types.js';
import { endpointPathFor } from '../../src/endpoint/types.js';
import { TINY_PNG_BASE64 } from '../../src/simulator/routes-images.js';

const input = (over: Partial<BodyInput> = {}): BodyInput => ({
  model: 'black-forest-labs/FLUX.1-dev',
  messages: [{ role: 'user', content: 'A serene mountain landscape at sunset' }],
  stream: false,
  useLegacyMaxTokens: false,
  perChunkUsage: false,
  extraInputs: { size: '512x512', quality: 'standard' },
  ...over,
});

test('image_generation body: prompt, model, response_format b64_json, n 1, then the extra inputs', () => {
  assert.equal(ENDPOINTS.image_generation, imageGeneration);
  assert.equal(endpointPathFor(imageGeneration, false), '/v1/images/generations');
  assert.deepEqual(imageGeneration.buildBody(input({ maxTokens: 50 })), {
    prompt: 'A serene mountain landscape at sunset',
    model: 'black-forest-labs/FLUX.1-dev',
    response_format: 'b64_json',
    n: 1,
    size: '512x512',
    quality: 'standard',
  });
  const streamed = imageGeneration.buildBody(
    input({ stream: true, extraInputs: { response_format: 'url' }, turnExtra: { n: 2 } }),
  );
  assert.deepEqual([streamed.stream, streamed.response_format, streamed.n], [true, 'url', 2]);
});

test('image_generation answers: an image (b64_json or url) is an answer without text; none is not', () => {
  const whole = imageGeneration.parse(
    { created: 1, data: [{ b64_json: TINY_PNG_BASE64 }], usage: { input_tokens: 7, output_tokens: 4160 } },
    false,
  );
  assert.deepEqual([whole.nonTokenContent, whole.text, whole.usage], [true, '', { prompt_tokens: 7 }]);
  assert.equal(imageGeneration.parse({ data: [{ url: 'https://x/img.png' }] }, false).nonTokenContent, true);
  assert.equal(imageGeneration.parse({ data: [] }, false).nonTokenContent, undefined);
  assert.equal(imageGeneration.parse({ data: [null, 5] }, false).nonTokenContent, undefined);
  const partial = imageGeneration.parse(
    { type: 'image_generation.partial_image', b64_json: TINY_PNG_BASE64, partial_image_index: 0 },
    true,
  );
  assert.deepEqual([partial.nonTokenContent, partial.streamEnd], [true, undefined]);
  const done = imageGeneration.parse({ type: 'image_generation.completed', b64_json: TINY_PNG_BASE64 }, true);
  assert.deepEqual([done.nonTokenContent, done.streamEnd], [true, true]);
  const error = imageGeneration.parse({ error: { message: 'bad size', code: 400 } }, false);
  assert.deepEqual(
    [error.error?.message, error.error?.code, error.nonTokenContent],
    ['bad size', 400, undefined],
  );
});

test('the simulator image is a valid PNG (signature, IHDR 1×1)', () => {
  const png = Buffer.from(TINY_PNG_BASE64, 'base64');
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1, 1]);
});
