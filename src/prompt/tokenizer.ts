/**
 * Tokenizer loading. The engine is `@huggingface/tokenizers` (pure JS, ids identical to HF's Rust
 * `tokenizers` on Qwen3/Llama 3). The default vocabulary is the bundled Qwen3 `tokenizer.json.gz`
 * (Apache-2.0, see assets/tokenizers/NOTICE.md). `loadTokenizer` takes a Hugging Face model folder
 * (with `tokenizer.json` and optionally `tokenizer_config.json`) or a `tokenizer.json` path; a run
 * first resolves a model name to one through the Hugging Face cache or Hub (tokenizer-source.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Tokenizer } from '@huggingface/tokenizers';
import { TokenloadError } from '../errors.js';
import { packageRoot } from '../util/package-root.js';
import { buildFastEncoder, isFastPathEligible, type TokenizerJson } from './fast-encoder.js';

/** A loaded tokenizer. All counts exclude special tokens the tokenizer would add (`add_special_tokens=false`). */
export interface TextTokenizer {
  /** Human-readable source (`builtin:qwen3` or the file path). */
  readonly name: string;
  /** Token ids of `text`, without added BOS/EOS. */
  encode(text: string): number[];
  /** Number of tokens of `text` (same rule as `encode`). */
  count(text: string): number;
  /** Text of `ids`, special tokens kept as their literal strings. */
  decode(ids: readonly number[]): string;
  /**
   * Full vocabulary as token-string → id: the model's own map (e.g. `Ġthe` for byte-level BPE),
   * which also holds the added tokens (`<|im_start|>`), as the library's tokenizer sets them.
   * Shared with the encoder, not a copy.
   */
  vocab(): ReadonlyMap<string, number>;
  /**
   * SHA-256 (hex) of what `encode` depends on besides the library (whose version package.json
   * pins): the engine and the content of `tokenizer.json` (gunzipped when stored as `.gz`), and for
   * the `library` engine also `tokenizer_config.json` (the `fast` engine reads only tokenizer.json;
   * the config only decides whether it is eligible). Equal fingerprints encode alike, so the same
   * vocabulary has the same fingerprint wherever its file is (prompt/word-list.ts keys its stored
   * lists by it). Absent for a tokenizer not made by {@link loadTokenizer}.
   */
  readonly fingerprint?: string;
  /**
   * Tells the encoder that each `[piece, id]` encodes to the one token `id` (pairs checked against
   * a tokenizer of the same fingerprint), so its first encode skips BPE. Absent when the engine
   * keeps no piece cache (`library`).
   */
  prime?(pieces: Iterable<readonly [string, number]>): void;
  /** `fast`: the cached exact encoder of fast-encoder.ts; `library`: the library's full encode. */
  readonly engine: 'fast' | 'library';
  /**
   * True when a space between two ASCII letters always starts a new token piece (fast-encoder.ts
   * `cutsAtSpaces`): the count of a text cut at such spaces is the sum of its parts' counts.
   * Absent means false.
   */
  readonly cutsAtSpaces?: boolean;
  /**
   * The model's context length from tokenizer_config.json's `model_max_length`, tokens; absent when
   * the config has none or Hugging Face's "unknown" value (anything above 2^24, e.g. 1e30).
   */
  readonly modelMaxLength?: number;
  /** BOS / EOS token strings from tokenizer_config.json, if set. */
  readonly bosToken: string | null;
  readonly eosToken: string | null;
}

/** Name that selects the bundled Qwen3 tokenizer. */
export const BUILTIN_TOKENIZER = 'builtin:qwen3';

/** Errors loading a tokenizer: message names the path that failed. */
export class TokenizerLoadError extends TokenloadError {
  override readonly name = 'TokenizerLoadError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('E_TOKENIZER', message, options);
  }
}

/** Reads a JSON file, gunzipping it when the path ends in `.gz`. @throws on I/O or parse errors. */
export function readJson(path: string): unknown {
  return JSON.parse(readText(path).toString('utf8'));
}

/** The bytes of the file at `path`, gunzipped when the path ends in `.gz`. */
function readText(path: string): Buffer {
  const bytes = readFileSync(path);
  return path.endsWith('.gz') ? gunzipSync(bytes) : bytes;
}

/** The JSON files of a tokenizer: `tokenizer.json` (the vocabulary and pipeline) or `tokenizer_config.json`. */
export type TokenizerJsonKind = 'tokenizer' | 'config';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * What makes `value`, a parsed file of `kind`, unusable, as a predicate (`is not a JSON object`), or
 * null: `tokenizer.json` must be an object with a `model` object, `tokenizer_config.json` an object.
 */
export function tokenizerJsonProblem(kind: TokenizerJsonKind, value: unknown): string | null {
  if (!isObject(value)) return 'is not a JSON object';
  if (kind === 'tokenizer' && !isObject(value.model)) return 'has no "model" object (not a tokenizer.json)';
  return null;
}

/**
 * Reads the tokenizer file `path` of `kind`.
 * @param label how the tokenizer is named in messages, e.g. `--tokenizer org/name`.
 * @throws {TokenizerLoadError} naming `path`: unreadable, not JSON, or not a file of `kind`.
 */
export function readTokenizerJson(
  path: string,
  kind: TokenizerJsonKind,
  label: string,
): Record<string, unknown> {
  return readTokenizerFile(path, kind, label).value;
}

/** {@link readTokenizerJson}, with the file's bytes (gunzipped). @throws as it does. */
function readTokenizerFile(
  path: string,
  kind: TokenizerJsonKind,
  label: string,
): { value: Record<string, unknown>; bytes: Buffer } {
  let value: unknown;
  let bytes: Buffer;
  try {
    bytes = readText(path);
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new TokenizerLoadError(`${label}: cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  const problem = tokenizerJsonProblem(kind, value);
  if (problem !== null) throw new TokenizerLoadError(`${label}: ${path} ${problem}`);
  return { value: value as Record<string, unknown>, bytes };
}

/** @throws {TokenizerLoadError} when the library rejects the tokenizer.json. */
function buildLibraryTokenizer(
  json: Record<string, unknown>,
  config: Record<string, unknown>,
  spec: string,
  path: string,
): Tokenizer {
  try {
    return new Tokenizer(json, config);
  } catch (err) {
    throw new TokenizerLoadError(
      `--tokenizer ${spec}: ${path} is not a usable tokenizer.json (${(err as Error).message})`,
    );
  }
}

/** The files of a tokenizer: tokenizer.json, and beside it the optional config and chat template. */
export interface TokenizerFiles {
  tokenizerJson: string;
  /** `tokenizer_config.json` (special tokens, `chat_template`), when present. */
  configJson: string | null;
  /** `chat_template.jinja` (the template saved on its own by newer transformers), when present. */
  chatTemplateFile: string | null;
  name: string;
}

/** `name` in `dir`, or null when it is not there. */
function beside(dir: string, name: string): string | null {
  const path = join(dir, name);
  return existsSync(path) ? path : null;
}

/**
 * Resolves a local tokenizer spec (`builtin:qwen3`, a folder, a tokenizer.json path) to its files.
 * @throws {TokenizerLoadError} naming the path: missing, a folder without tokenizer.json, not a JSON file.
 */
export function resolveFiles(spec: string): TokenizerFiles {
  if (spec === BUILTIN_TOKENIZER || spec === 'builtin') {
    const dir = join(packageRoot(), 'assets', 'tokenizers', 'qwen3');
    return {
      tokenizerJson: join(dir, 'tokenizer.json.gz'),
      configJson: join(dir, 'tokenizer_config.json'),
      chatTemplateFile: null,
      name: BUILTIN_TOKENIZER,
    };
  }
  if (!existsSync(spec)) {
    throw new TokenizerLoadError(
      `--tokenizer ${spec}: no such file or folder (give a Hugging Face model folder or a tokenizer.json path)`,
    );
  }
  if (statSync(spec).isDirectory()) {
    const json = beside(spec, 'tokenizer.json') ?? beside(spec, 'tokenizer.json.gz');
    if (json === null) throw new TokenizerLoadError(`--tokenizer ${spec}: folder has no tokenizer.json`);
    const extra = { configJson: beside(spec, 'tokenizer_config.json'), name: spec };
    return { tokenizerJson: json, ...extra, chatTemplateFile: beside(spec, 'chat_template.jinja') };
  }
  const isJson = basename(spec).endsWith('.json') || basename(spec).endsWith('.json.gz');
  if (!isJson)
    throw new TokenizerLoadError(`--tokenizer ${spec}: expected a tokenizer.json file or a folder`);
  const dir = dirname(spec);
  return {
    tokenizerJson: spec,
    configJson: beside(dir, 'tokenizer_config.json'),
    chatTemplateFile: beside(dir, 'chat_template.jinja'),
    name: spec,
  };
}

function specialTokenString(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { content?: unknown }).content === 'string'
  ) {
    return (value as { content: string }).content;
  }
  return null;
}

/**
 * Loads a tokenizer synchronously (about 1 s for Qwen3 the first time). Encoding uses the exact cached
 * fast path (fast-encoder.ts) when the tokenizer has the Qwen2/Qwen3/Llama 3 pipeline shape, unless
 * `options.engine` is `library`. A process loads the same files once: a later call with the same
 * spec, engine and unchanged files (size and modification time) returns the same tokenizer (a run
 * with `--simulator` counts with the one its simulator uses; see {@link LOADED_TOKENIZER_LIMIT}).
 * @param spec `builtin:qwen3` (default), a model folder, or a tokenizer.json(.gz) path.
 * @throws {TokenizerLoadError} naming the file that is missing, unreadable or not a tokenizer file.
 */
export function loadTokenizer(
  spec: string = BUILTIN_TOKENIZER,
  options: { engine?: 'auto' | 'library' } = {},
): TextTokenizer {
  const files = resolveFiles(spec);
  const key = loadedKey(files, options.engine ?? 'auto');
  const known = loaded.get(key);
  if (known !== undefined) return known;
  const tokenizer = buildTokenizer(spec, files, options);
  if (loaded.size >= LOADED_TOKENIZER_LIMIT) loaded.delete(loaded.keys().next().value ?? '');
  loaded.set(key, tokenizer);
  return tokenizer;
}

/** How many loaded tokenizers a process keeps for reuse (the oldest is let go first). */
export const LOADED_TOKENIZER_LIMIT = 4;

const loaded = new Map<string, TextTokenizer>();

/** Files, their size and modification time, and the engine: what a loaded tokenizer depends on. */
function loadedKey(files: TokenizerFiles, engine: string): string {
  const stamp = (path: string | null): string => {
    if (path === null) return '-';
    const st = statSync(path, { throwIfNoEntry: false });
    return st === undefined ? `${path}:missing` : `${path}:${st.size}:${st.mtimeMs}`;
  };
  return [engine, files.name, stamp(files.tokenizerJson), stamp(files.configJson)].join('\0');
}

function buildTokenizer(
  spec: string,
  files: TokenizerFiles,
  options: { engine?: 'auto' | 'library' },
): TextTokenizer {
  const label = `--tokenizer ${spec}`;
  const main = readTokenizerFile(files.tokenizerJson, 'tokenizer', label);
  const cfg = files.configJson === null ? null : readTokenizerFile(files.configJson, 'config', label);
  const json = main.value;
  const config = cfg?.value ?? {};
  const fast =
    options.engine !== 'library' && isFastPathEligible(json as TokenizerJson, config)
      ? buildFastEncoder(json as TokenizerJson)
      : null;
  // The library tokenizer (~1 s to build for Qwen3) is only needed without the fast path, or to decode.
  let library: Tokenizer | undefined;
  const tok = (): Tokenizer => {
    library ??= buildLibraryTokenizer(json, config, spec, files.tokenizerJson);
    return library;
  };
  if (fast === null) tok();
  const encode =
    fast === null
      ? (text: string): number[] => tok().encode(text, { add_special_tokens: false }).ids
      : (text: string): number[] => fast.encode(text);
  const engine = fast === null ? 'library' : 'fast';
  return {
    name: files.name,
    engine,
    cutsAtSpaces: fast?.cutsAtSpaces ?? false,
    encode,
    count: (text) => encode(text).length,
    decode: (ids) => tok().decode(ids as number[], { skip_special_tokens: false }),
    vocab: () => fast?.tokenIds ?? libraryVocab(tok(), json),
    fingerprint: fingerprintOf(engine, main.bytes, engine === 'fast' ? null : (cfg?.bytes ?? null)),
    ...(fast?.prime === undefined ? {} : { prime: (pieces) => fast.prime?.(pieces) }),
    ...modelMaxLengthOf(config),
    bosToken: specialTokenString(config.bos_token),
    eosToken: specialTokenString(config.eos_token),
  };
}

/** Above this, `model_max_length` is Hugging Face's placeholder for "not set" (int(1e30)), not a context. */
const MODEL_MAX_LENGTH_LIMIT = 2 ** 24;

/** `{modelMaxLength}` when the config gives a usable `model_max_length`, else nothing. */
function modelMaxLengthOf(config: Record<string, unknown>): { modelMaxLength?: number } {
  const v = config.model_max_length;
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 && v <= MODEL_MAX_LENGTH_LIMIT
    ? { modelMaxLength: v }
    : {};
}

/** SHA-256 (hex) of the engine and the two files' bytes (a config not given hashes as none). */
function fingerprintOf(engine: string, tokenizerBytes: Buffer, configBytes: Buffer | null): string {
  const hash = createHash('sha256');
  hash.update(`${engine}\0${tokenizerBytes.length}\0`).update(tokenizerBytes);
  hash.update(configBytes === null ? '\0none' : `\0${configBytes.length}\0`);
  if (configBytes !== null) hash.update(configBytes);
  return hash.digest('hex');
}

/** The library model's own token → id map; for a model without one, a map built from the raw vocab. */
function libraryVocab(tokenizer: Tokenizer, json: Record<string, unknown>): ReadonlyMap<string, number> {
  const own = (tokenizer as unknown as { model?: { tokens_to_ids?: unknown } }).model?.tokens_to_ids;
  if (own instanceof Map) return own as ReadonlyMap<string, number>;
  const model = json.model as { vocab?: Record<string, number> | Array<[string, number]> } | undefined;
  const raw = model?.vocab ?? {};
  return Array.isArray(raw)
    ? new Map(raw.map(([piece], i) => [piece, i] as [string, number]))
    : new Map(Object.entries(raw));
}
