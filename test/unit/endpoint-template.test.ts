/**
 * The `template` endpoint type (AIPerf docs, tutorials/template-endpoint.md) through its adapter as
 * a run gets it (`adapterFor`): the body each documented template renders from each variable the
 * doc uses, the answer's output found by `response_field` or auto-detection, and the refusals of a
 * template tokenload cannot fill.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { ChatMessage } from '../../src/dataset/types.js';
import { adapterFor } from '../../src/endpoint/registry.js';
import type { BodyInput, EndpointAdapter } from '../../src/endpoint/types.js';
import { endpointPathFor, requestPathFor } from '../../src/endpoint/types.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-template-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function adapter(extraInputs: Record<string, unknown>): EndpointAdapter {
  return adapterFor('template', { extraInputs });
}

function input(over: Partial<BodyInput> = {}): BodyInput {
  const messages: ChatMessage[] = [{ role: 'user', content: 'Hello "world"' }];
  return {
    model: 'my-model',
    messages,
    stream: false,
    useLegacyMaxTokens: false,
    perChunkUsage: false,
    extraInputs: {},
    ...over,
  };
}

const body = (a: EndpointAdapter, over: Partial<BodyInput> = {}) =>
  a.buildBody(input({ extraInputs: a.options?.extraInputs ?? {}, ...over }));

test("the doc's basic inline template sends the turn's text, JSON-escaped", () => {
  const a = adapter({ payload_template: '\n  {\n    "text": {{ text|tojson }}\n  }' });
  assert.deepEqual(body(a), { text: 'Hello "world"' });
});

test('the embedding template renders texts and model; other extra inputs are merged, then the turn extra', () => {
  const a = adapter({
    payload_template: '{"input": {{ texts|tojson }}, "model": {{ model|tojson }}, "temperature": 1}',
    response_field: 'embeddings',
    temperature: 0.7,
    top_p: 0.9,
  });
  assert.deepEqual(body(a, { turnExtra: { top_p: 0.5 } }), {
    input: ['Hello "world"'],
    model: 'my-model',
    temperature: 0.7,
    top_p: 0.5,
  });
});

test('the named template nv-embedqa sends every text of the turn', () => {
  const a = adapter({ payload_template: 'nv-embedqa' });
  const texts = [{ name: '', contents: ['one', 'two'] }];
  assert.deepEqual(body(a, { namedTexts: texts }), { text: ['one', 'two'] });
});

test("a template file with max_tokens and {{ stream|lower }}: the boolean renders as Jinja2's 'true'/'false'", () => {
  const file = join(dir, 'chat_template.json');
  writeFileSync(
    file,
    '{\n  "model": {{ model|tojson }},\n  "prompt": {{ text|tojson }},\n  "max_new_tokens": {{ max_tokens|tojson }},\n  "stream": {{ stream|lower }}\n}\n',
  );
  const a = adapter({ payload_template: file, response_field: 'generated_text' });
  assert.deepEqual(body(a, { stream: true, maxTokens: 100 }), {
    model: 'my-model',
    prompt: 'Hello "world"',
    max_new_tokens: 100,
    stream: true,
  });
  assert.deepEqual(body(a, { stream: false }), {
    model: 'my-model',
    prompt: 'Hello "world"',
    max_new_tokens: null,
    stream: false,
  });
  // The options a worker thread is sent carry the file's text, not its path.
  assert.match(String(a.options?.extraInputs.payload_template), /max_new_tokens/);
});

test('query, passages, texts_by_name and role come from the named texts and the last message', () => {
  const a = adapter({
    payload_template:
      '{"q": {{ query|tojson }}, "qs": {{ queries|tojson }}, "p": {{ passage|tojson }}, "ps": {{ passages|tojson }}, "by": {{ texts_by_name|tojson }}, "role": {{ role|tojson }}, "upper": "{{ stream|upper }}"}',
  });
  const namedTexts = [
    { name: 'query', contents: ['what?'] },
    { name: 'passages', contents: ['a', 'b'] },
  ];
  assert.deepEqual(body(a, { namedTexts }), {
    q: 'what?',
    qs: ['what?'],
    p: 'a',
    ps: ['a', 'b'],
    by: { query: ['what?'], passages: ['a', 'b'] },
    role: 'user',
    upper: 'FALSE',
  });
});

test('a template that does not render a JSON object fails the request, not the run', () => {
  const a = adapter({ payload_template: '{"text": {{ text }}}' });
  assert.throws(() => body(a), /did not render JSON/);
});

test('response_field reads the named field; a miss or an empty value contributes nothing', () => {
  const a = adapter({ payload_template: '{}', response_field: 'generated_text' });
  assert.equal(a.parse({ generated_text: 'Hi there', text: 'other' }, false).text, 'Hi there');
  const miss = a.parse({ text: 'other' }, false);
  assert.deepEqual([miss.text, miss.nonTokenContent], ['', undefined]);
  const vector = adapter({ payload_template: '{}', response_field: 'data[0].vector' });
  assert.equal(vector.parse({ data: [{ vector: [0.1, 0.2] }] }, false).nonTokenContent, true);
  assert.equal(vector.parse({ data: [{ vector: [] }] }, false).nonTokenContent, undefined);
  const last = adapter({ payload_template: '{}', response_field: 'outputs[-1].text' });
  assert.equal(last.parse({ outputs: [{ text: 'a' }, { text: 'b' }] }, false).text, 'b');
});

test('auto-detection: embeddings, then rankings, then text, as AIPerf tries them', () => {
  const a = adapter({ payload_template: '{}' });
  const embedded = a.parse({ data: [{ object: 'embedding', embedding: [0.1] }], text: 'x' }, false);
  assert.deepEqual([embedded.text, embedded.nonTokenContent], ['', true]);
  assert.equal(a.parse({ embeddings: [[0.1, 0.2]] }, false).nonTokenContent, true);
  assert.equal(a.parse({ rankings: [{ index: 0, score: 1 }], text: 'x' }, false).nonTokenContent, true);
  assert.equal(a.parse({ response: 'plain' }, false).text, 'plain');
  assert.equal(a.parse({ output: ['A', 'B'] }, false).text, 'AB');
  assert.equal(a.parse({ choices: [{ message: { content: 'chat' } }] }, false).text, 'chat');
  assert.equal(
    a.parse({ choices: [{ delta: { content: 'piece' }, finish_reason: 'stop' }] }, true).text,
    'piece',
  );
  assert.equal(a.parse({ choices: [{ finish_reason: 'stop' }] }, true).finishReason, 'stop');
  assert.equal(a.parse('a JSON string', false).text, 'a JSON string');
  assert.deepEqual(a.parse({ error: { message: 'bad', code: 400 } }, false).error, {
    message: 'bad',
    code: 400,
    type: null,
  });
});

test('the type has no default path: requests go to the --url as given', () => {
  const a = adapter({ payload_template: '{}' });
  const path = endpointPathFor(a, true, undefined);
  assert.equal(requestPathFor('http://localhost:8000/custom-endpoint', path), '/custom-endpoint');
  assert.equal(requestPathFor('http://localhost:8000', path), '/');
  assert.equal(requestPathFor('http://localhost:8000', endpointPathFor(a, false, '/embed')), '/embed');
});

test('refused as configuration: no template, a media or AIPerf-object variable, a JMESPath beyond field paths', () => {
  assert.throws(() => adapter({}), ConfigError);
  assert.throws(() => adapter({}), /needs --extra-inputs payload_template/);
  assert.throws(
    () => adapter({ payload_template: '{"text": {{ text|tojson }}, "image": {{ image|tojson }}}' }),
    /uses image, which tokenload cannot fill: it sends text only/,
  );
  assert.throws(() => adapter({ payload_template: '{"t": {{ request_info|tojson }}}' }), /uses request_info/);
  assert.throws(
    () => adapter({ payload_template: '{}', response_field: 'data[*].embedding' }),
    /reads a field path of names/,
  );
  assert.throws(() => adapter({ payload_template: '{"a": {{ }}' }), /does not parse/);
  // The doc's `payload_template:./chat_template.json` run where that file is not: refused before
  // anything is sent, not 20 failed requests.
  assert.throws(
    () => adapter({ payload_template: './no-such-template.json' }),
    /payload_template:\.\/no-such-template\.json: no such file, and not a named template/,
  );
});
