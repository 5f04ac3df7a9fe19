/**
 * The templated count of `--apply-chat-template` (prompt/template-count.ts) is exact: for long
 * messages of any text (code, Unicode, blank lines, leading and trailing spaces, special-token
 * strings), under the bundled Qwen3 template and under a template that trims and rewrites the
 * messages, it equals the tokenizer's count of the whole rendered prompt, which it does not compute.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Template } from '@huggingface/jinja';
import type { ChatMessage } from '../../src/dataset/types.js';
import { type ChatTemplate, loadChatTemplate } from '../../src/prompt/chat-template.js';
import { PromptSynthesizer } from '../../src/prompt/synthesizer.js';
import { dropLastWords, TemplateCounter } from '../../src/prompt/template-count.js';
import { loadTokenizer } from '../../src/prompt/tokenizer.js';

const tokenizer = loadTokenizer();
const synthesizer = PromptSynthesizer.create(tokenizer, 9);

const PIECES = [
  "def f(x):\n    return x**2  # it's\r\n",
  ' naïve café, 中文分词, русский, 🤖🚀 ',
  '\n\n\tdone  ',
  '<|im_start|>user\nhi<|im_end|>',
  ' plain words in a row',
  "I'll say 42,000 times: don't.",
];

/** A long text of mixed pieces around synthesized words, starting and ending as `edges` say. */
function mixedText(seed: number, edges: [string, string]): string {
  const words = synthesizer.synthesize(900 + seed * 37, [], 16, `mixed-${seed}`).text;
  const parts = [edges[0]];
  for (let i = 0; i < 6; i++)
    parts.push(PIECES[(seed + i) % PIECES.length] as string, words.slice(i * 800, i * 800 + 800));
  parts.push(edges[1]);
  return parts.join('');
}

function conversations(): ChatMessage[][] {
  const edges: Array<[string, string]> = [
    ['', ''],
    [' ', ' '],
    ['\n', '\n\n'],
    ['word', 'end.'],
    ['  two', 'spaces  '],
  ];
  return edges.map((e, i) => [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: mixedText(i, e) },
    { role: 'assistant', content: mixedText(i + 10, e) },
    { role: 'user', content: mixedText(i + 20, e) },
  ]);
}

function assertExact(template: ChatTemplate): void {
  const counter = new TemplateCounter(template, tokenizer);
  for (const messages of conversations()) {
    const counts = messages.map((m) => tokenizer.count(m.content as string));
    const whole = tokenizer.count(template.render(messages));
    assert.equal(counter.count(messages, counts), whole);
    // Unknown counts (null) are tokenized in full: the same result.
    assert.equal(
      counter.count(
        messages,
        counts.map(() => null),
      ),
      whole,
    );
  }
}

test('exact under the bundled Qwen3 template', () => {
  assert.ok(tokenizer.cutsAtSpaces, 'the fast path of the bundled tokenizer cuts at spaces');
  assertExact(loadChatTemplate('builtin'));
});

test('exact under a template that trims and rewrites message texts', () => {
  const text =
    "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | trim }}{% if m.role == 'assistant' %}{{ m.content[:5] }}{% endif %}<|im_end|>\n{% endfor %}<|im_start|>assistant\n";
  const jinja = new Template(text);
  assertExact({
    source: 'trim',
    render: (messages) => jinja.render({ messages, bos_token: '<|endoftext|>' }),
  });
});

test('a synthesized text fitted to a templated length renders to exactly that length', () => {
  const template = loadChatTemplate('builtin');
  const counter = new TemplateCounter(template, tokenizer);
  for (const length of [9, 64, 700, 5000]) {
    const built = synthesizer.synthesizePieces(length, length > 16 ? [1, 2] : [], 16, `fit-${length}`);
    const fit = counter.fitUserText(built.pieces, built.tokens, length, synthesizer.additive);
    const text = fit.pieces.join('');
    assert.equal(fit.templatedTokens, length);
    assert.equal(tokenizer.count(template.render([{ role: 'user', content: text }])), length);
    assert.equal(tokenizer.count(text), fit.textTokens);
    assert.ok(built.pieces.join('').startsWith(text), 'the text is the untemplated prompt cut at its end');
  }
});

test('dropLastWords removes whole space-led words from the end, across pieces', () => {
  assert.deepEqual(dropLastWords([' a b', ' c d e'], 4), [' a']);
  assert.deepEqual(dropLastWords([' a b', ' c'], 1), [' a b']);
  assert.deepEqual(dropLastWords([' a'], 5), []);
  assert.deepEqual(dropLastWords([' a b'], 0), [' a b']);
});
