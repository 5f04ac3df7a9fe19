import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitAddedTokens } from '../../src/prompt/fast-encoder.js';
import { loadTokenizer } from '../../src/prompt/tokenizer.js';

function lcg(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x;
  };
}

/** Synthesized-looking ` word` text plus punctuation, digits, CJK, emoji, newlines and added tokens. */
function mixedCorpus(words: readonly string[], pieces: number): string[] {
  const extras = [
    ', ',
    '. ',
    '!\n',
    '\n\n',
    '\r\n',
    '\t',
    '  ',
    '   ',
    "'s",
    "'LL",
    ' 12345',
    '3.14159',
    ' (x+y)',
    ' {"a": [1, 2]}',
    '机器学习是人工智能的一个分支',
    ' 東京タワー',
    ' 한국어 문장',
    ' 👩‍👩‍👧‍👦',
    ' 🚀🔥',
    ' café',
    ' cafe\u0301',
    ' Ω≈ç√',
    '<|im_start|>user\n',
    '<|im_end|>',
    '<think>',
    '</think>',
    ' <|endoftext|>',
    ' ﬁ',
    '\u00a0',
    ' x\u2028y',
    'ÀÉÎ',
    ' https://example.com/a?b=c',
    '    indented code();',
    ' --flag=value',
    'ALLCAPS',
    'MixedCase',
  ];
  const rnd = lcg(11);
  const texts: string[] = [];
  for (let t = 0; t < 200; t++) {
    let s = '';
    for (let i = 0; i < pieces; i++) {
      const r = rnd();
      s += r % 5 === 0 ? extras[r % extras.length] : ` ${words[r % words.length]}`;
    }
    texts.push(s);
  }
  return texts;
}

test('fast prompt tokenizer equals the library on a mixed corpus', () => {
  const lib = loadTokenizer('builtin:qwen3', { engine: 'library' });
  const fast = loadTokenizer('builtin:qwen3');
  assert.equal(fast.engine, 'fast');
  const words = [...lib.vocab().keys()].filter((k) => /^Ġ[a-z]{2,12}$/.test(k)).map((k) => k.slice(1));
  let tokens = 0;
  for (const text of mixedCorpus(words.slice(0, 5000), 400)) {
    const want = lib.encode(text);
    assert.deepEqual(fast.encode(text), want);
    assert.deepEqual(fast.encode(text), want, 'cached pieces give the same ids');
    tokens += want.length;
  }
  assert.ok(tokens > 50_000);
});

test('added tokens split with longest match, like the library', () => {
  const added = new Map([
    ['<a>', 1],
    ['<a><b>', 2],
  ]);
  assert.deepEqual(splitAddedTokens('x<a><b>y<a>', added, 6), ['x', '<a><b>', 'y', '<a>']);
  assert.deepEqual(splitAddedTokens('plain', added, 6), ['plain']);
});

test("engine: 'library' selects the library engine", () => {
  const lib = loadTokenizer('builtin:qwen3', { engine: 'library' });
  assert.equal(lib.engine, 'library');
  assert.deepEqual(lib.encode('Hello world'), [9707, 1879]);
});

test('plain space-separated ASCII words (the synthesized-prompt shape) encode like the library', () => {
  const lib = loadTokenizer('builtin:qwen3', { engine: 'library' });
  const fast = loadTokenizer('builtin:qwen3');
  const words = [...lib.vocab().keys()]
    .filter((k) => /^Ġ?[A-Za-z]{1,14}$/.test(k))
    .map((k) => k.replace('Ġ', ''));
  const rnd = lcg(5);
  for (let t = 0; t < 300; t++) {
    let s = t % 2 === 0 ? '' : (words[rnd() % words.length] as string);
    for (let i = 0; i < 200; i++) {
      const w = words[rnd() % words.length] as string;
      s += rnd() % 7 === 0 ? ` ${w.toUpperCase()}${w}` : ` ${w}`;
    }
    assert.deepEqual(fast.encode(s), lib.encode(s), s.slice(0, 80));
  }
  for (const edge of ['a', 'Ab', ' a', 'a b', 'a  b', 'a b ', ' ', 'a\u00e9 b', 'ab cd.']) {
    assert.deepEqual(fast.encode(edge), lib.encode(edge), JSON.stringify(edge));
  }
});
