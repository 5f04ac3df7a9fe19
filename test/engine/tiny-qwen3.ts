/**
 * A tiny random-weight Qwen3 model for the real-engine test, written as GGUF at test setup (never
 * committed, nothing downloaded): the real Qwen3 vocabulary, merges, special tokens and chat template
 * from the bundled tokenizer (assets/tokenizers/qwen3), and a 2-layer, 64-wide `qwen3` network whose
 * weights come from a seeded generator. It computes nothing meaningful; it makes llama.cpp do the
 * real work of a server (tokenize, template, prefill, KV cache, batched decode) at test speed.
 */

import { BUILTIN_TOKENIZER, readJson, resolveFiles } from '../../src/prompt/tokenizer.js';
import { rngFromKey } from '../../src/util/rng.js';
import { type GgufTensor, type GgufValue, writeGguf } from './gguf-writer.js';

/** Network shape of the tiny model (head size = hidden / heads). */
export interface TinyModelShape {
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  /** `qwen3.context_length`, tokens: the longest context the model declares. */
  contextLength: number;
}

/** Default shape: 2 layers, hidden 64, 4 query heads of 16 over 2 KV heads, FFN 128, 32k context. */
export const TINY_SHAPE: TinyModelShape = {
  layers: 2,
  hidden: 64,
  heads: 4,
  kvHeads: 2,
  feedForward: 128,
  contextLength: 32768,
};

/** What was written. */
export interface TinyModelFile {
  path: string;
  bytes: number;
  vocabSize: number;
  /** Id of the chat template's end-of-turn token (`eos_token` of tokenizer_config.json). */
  eosId: number;
}

/** llama.cpp token types (`llama_token_type`): normal, control (special), user-defined (added, not special). */
const TOKEN_TYPE = { normal: 1, control: 3, userDefined: 4 } as const;

interface AddedToken {
  id: number;
  content: string;
  special: boolean;
}

interface TokenizerJsonShape {
  added_tokens: AddedToken[];
  model: { type: string; vocab: Record<string, number>; merges: Array<string | [string, string]> };
}

interface TokenizerConfigShape {
  bos_token?: string | null;
  eos_token?: string | null;
  pad_token?: string | null;
  chat_template?: string;
}

/** The bundled tokenizer as GGUF arrays: tokens by id, their types, merges as "left right". */
function vocabularyArrays(json: TokenizerJsonShape): {
  tokens: string[];
  types: Int32Array;
  merges: string[];
} {
  const size = Object.keys(json.model.vocab).length + json.added_tokens.length;
  const tokens: Array<string | undefined> = Array.from({ length: size }, () => undefined);
  const types = new Int32Array(size).fill(TOKEN_TYPE.normal);
  for (const [piece, id] of Object.entries(json.model.vocab)) tokens[id] = piece;
  for (const t of json.added_tokens) {
    tokens[t.id] = t.content;
    types[t.id] = t.special ? TOKEN_TYPE.control : TOKEN_TYPE.userDefined;
  }
  const missing = tokens.indexOf(undefined);
  if (missing >= 0) throw new Error(`bundled tokenizer has no token with id ${missing} (ids must be dense)`);
  const merges = json.model.merges.map((m) => (typeof m === 'string' ? m : `${m[0]} ${m[1]}`));
  return { tokens: tokens as string[], types, merges };
}

/** Id of a special token named by tokenizer_config.json. @throws {Error} when it is not in the vocabulary. */
function tokenId(tokens: readonly string[], content: string, field: string): number {
  const id = tokens.indexOf(content);
  if (id < 0) throw new Error(`tokenizer_config.json ${field} ${content} is not in the vocabulary`);
  return id;
}

/** Uniform random values in [-scale, scale) from a seeded generator. */
function randomValues(count: number, key: string, scale: number): Float32Array {
  const next = rngFromKey(key);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = ((next() / 4294967296) * 2 - 1) * scale;
  return out;
}

/** The network's tensors (output projection tied to the embedding, as Qwen3's small models do). */
function networkTensors(shape: TinyModelShape, vocabSize: number, seed: number): GgufTensor[] {
  const { hidden, heads, kvHeads, feedForward: ff } = shape;
  const headDim = hidden / heads;
  const kvDim = kvHeads * headDim;
  const matrix = (name: string, inner: number, outer: number): GgufTensor => ({
    name,
    dims: [inner, outer],
    data: randomValues(inner * outer, `${seed}:${name}`, 1 / Math.sqrt(inner)),
    type: 'f16',
  });
  const ones = (name: string, n: number): GgufTensor => ({
    name,
    dims: [n],
    data: new Float32Array(n).fill(1),
    type: 'f32',
  });
  const tensors: GgufTensor[] = [
    matrix('token_embd.weight', hidden, vocabSize),
    ones('output_norm.weight', hidden),
  ];
  for (let i = 0; i < shape.layers; i++) {
    const b = `blk.${i}`;
    tensors.push(
      ones(`${b}.attn_norm.weight`, hidden),
      matrix(`${b}.attn_q.weight`, hidden, hidden),
      matrix(`${b}.attn_k.weight`, hidden, kvDim),
      matrix(`${b}.attn_v.weight`, hidden, kvDim),
      matrix(`${b}.attn_output.weight`, hidden, hidden),
      ones(`${b}.attn_q_norm.weight`, headDim),
      ones(`${b}.attn_k_norm.weight`, headDim),
      ones(`${b}.ffn_norm.weight`, hidden),
      matrix(`${b}.ffn_gate.weight`, hidden, ff),
      matrix(`${b}.ffn_up.weight`, hidden, ff),
      matrix(`${b}.ffn_down.weight`, ff, hidden),
    );
  }
  return tensors;
}

function hyperparameters(shape: TinyModelShape): Array<[string, GgufValue]> {
  const headDim = shape.hidden / shape.heads;
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  return [
    ['qwen3.context_length', u32(shape.contextLength)],
    ['qwen3.embedding_length', u32(shape.hidden)],
    ['qwen3.block_count', u32(shape.layers)],
    ['qwen3.feed_forward_length', u32(shape.feedForward)],
    ['qwen3.attention.head_count', u32(shape.heads)],
    ['qwen3.attention.head_count_kv', u32(shape.kvHeads)],
    ['qwen3.attention.key_length', u32(headDim)],
    ['qwen3.attention.value_length', u32(headDim)],
    ['qwen3.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-6 }],
    ['qwen3.rope.freq_base', { type: 'f32', value: 1_000_000 }],
  ];
}

/**
 * Writes the tiny Qwen3 GGUF at `path`. Tokenizer metadata: `tokenizer.ggml.model` "gpt2" (byte-level
 * BPE), `tokenizer.ggml.pre` "qwen2" (Qwen2/Qwen3's pre-tokenizer regex), every token with its type
 * (added special tokens control, other added tokens user-defined), the merges, eos and pad ids from
 * tokenizer_config.json, and its chat template. tokenizer_config.json sets no `bos_token` (Qwen3 adds
 * none): bos is its pad token `<|endoftext|>`, as in Qwen's own GGUF releases, with add_bos_token off.
 * @param seed weights are a pure function of (seed, tensor name)
 * @throws {Error} when the bundled tokenizer is not what this writer expects, or on I/O errors.
 */
export function writeTinyQwen3(
  path: string,
  seed: number,
  shape: TinyModelShape = TINY_SHAPE,
): TinyModelFile {
  const files = resolveFiles(BUILTIN_TOKENIZER);
  const json = readJson(files.tokenizerJson) as TokenizerJsonShape;
  const config = readJson(files.configJson as string) as TokenizerConfigShape;
  if (json.model.type !== 'BPE') throw new Error(`bundled tokenizer is ${json.model.type}, expected BPE`);
  const { tokens, types, merges } = vocabularyArrays(json);
  const eosId = tokenId(tokens, config.eos_token ?? '', 'eos_token');
  const padId = tokenId(tokens, config.pad_token ?? '', 'pad_token');
  const bosId = config.bos_token ? tokenId(tokens, config.bos_token, 'bos_token') : padId;
  if (config.chat_template === undefined)
    throw new Error('bundled tokenizer_config.json has no chat_template');
  const metadata: Array<[string, GgufValue]> = [
    ['general.architecture', { type: 'string', value: 'qwen3' }],
    ['general.name', { type: 'string', value: 'tokenload tiny random Qwen3' }],
    ['general.file_type', { type: 'u32', value: 1 }],
    ...hyperparameters(shape),
    ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'string', value: 'qwen2' }],
    ['tokenizer.ggml.tokens', { type: 'strings', value: tokens }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: types }],
    ['tokenizer.ggml.merges', { type: 'strings', value: merges }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: bosId }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: eosId }],
    ['tokenizer.ggml.padding_token_id', { type: 'u32', value: padId }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
    ['tokenizer.chat_template', { type: 'string', value: config.chat_template }],
  ];
  const bytes = writeGguf(path, metadata, networkTensors(shape, tokens.length, seed));
  return { path, bytes, vocabSize: tokens.length, eosId };
}
