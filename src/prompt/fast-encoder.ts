/**
 * Exact, fast encoding for the common tokenizer shape, used by the client (token counts) and the
 * simulator (prompt token ids for `prompt_tokens` and KV-block hashing) at millions of tokens/s.
 *
 * `@huggingface/tokenizers` spends most of its time in the pre-tokenizer (regex split, then a
 * per-byte ByteLevel mapping of every piece). For tokenizers whose pipeline is the known
 * Qwen2/Qwen3/Llama 3 shape — NFC (or no) normalizer, `Sequence[Split(Regex, Isolated),
 * ByteLevel(use_regex=false)]`, BPE, added tokens that are not normalized and not stripped — this
 * module runs the same steps with the library's own compiled split regex and BPE model, but caches
 * `piece → ids` so each distinct piece is mapped and merged once. Any other tokenizer falls back to
 * the library's full `encode` (see `loadTokenizer`). Exactness against the library is checked
 * by `test/unit/sim-prompt-tokenizer.test.ts` on a mixed corpus.
 */
import * as hf from '@huggingface/tokenizers';

/** Encodes prompt text to token ids (no BOS/EOS), exactly like `loadTokenizer(spec).encode`. */
export interface PromptTokenizer {
  /** `fast` when the cached pipeline is used, `library` for the full-library fallback. */
  readonly engine: 'fast' | 'library';
  /** Token ids of `text`. */
  encode(text: string): number[];
  /**
   * True when a space between two ASCII letters always starts a new piece of the split pattern and
   * no added token holds a space, so a text cut at such a space counts as the sum of its two parts.
   * Absent means false.
   */
  readonly cutsAtSpaces?: boolean;
  /**
   * The BPE model's own token → id map (the model vocabulary, with the added tokens set on it as
   * the library's tokenizer sets them), shared, not copied. Absent for the library fallback.
   */
  readonly tokenIds?: ReadonlyMap<string, number>;
  /**
   * Records that each `[piece, id]` encodes to the single token `id`, so a later encode of that
   * piece skips BPE. Only for pairs already checked against this encoder (a wrong pair would
   * change token ids). Absent for the library fallback.
   */
  prime?(pieces: Iterable<readonly [string, number]>): void;
}

/** Upper bound on cached pieces; the cache is cleared when it is reached (pieces are short). */
const PIECE_CACHE_LIMIT = 500_000;

/** The library's BPE model, as far as this module uses it. */
interface BpeModel {
  encode(tokens: string[]): string[];
  tokens_to_ids: Map<string, number>;
  unk_token_id?: number;
}

/** Runtime classes the library exports but whose bundled typings do not resolve under NodeNext. */
interface HfRuntime {
  BPE: new (config: unknown) => BpeModel;
  ByteLevelPreTokenizer: new (config: unknown) => { pre_tokenize_text(text: string): string[] };
  SplitPreTokenizer: new (config: unknown) => { pattern: RegExp | null };
}

interface AddedTokenJson {
  id: number;
  content: string;
  normalized?: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  single_word?: boolean;
}

/** The parts of tokenizer.json this module reads. */
export interface TokenizerJson {
  normalizer?: { type?: string } | null;
  pre_tokenizer?: {
    type?: string;
    pretokenizers?: Array<Record<string, unknown>>;
  } | null;
  model?: { type?: string; fuse_unk?: boolean; byte_fallback?: boolean } & Record<string, unknown>;
  added_tokens?: AddedTokenJson[];
}

/** True when `json` has the pipeline shape this module reproduces exactly. */
export function isFastPathEligible(json: TokenizerJson, config: Record<string, unknown>): boolean {
  const norm = json.normalizer;
  if (norm !== null && norm !== undefined && norm.type !== 'NFC') return false;
  const pre = json.pre_tokenizer;
  const steps = pre?.type === 'Sequence' ? pre.pretokenizers : undefined;
  if (steps?.length !== 2) return false;
  const [split, byteLevel] = steps as [Record<string, unknown>, Record<string, unknown>];
  const pattern = split.pattern as { Regex?: unknown } | undefined;
  if (split.type !== 'Split' || split.behavior !== 'Isolated' || split.invert === true) return false;
  if (typeof pattern?.Regex !== 'string') return false;
  if (
    byteLevel.type !== 'ByteLevel' ||
    byteLevel.use_regex !== false ||
    byteLevel.add_prefix_space === true
  ) {
    return false;
  }
  if (json.model?.type !== 'BPE' || json.model.fuse_unk === true) return false;
  if (config.remove_space === true || config.do_lowercase_and_remove_accent === true) return false;
  const added = json.added_tokens ?? [];
  return added.every((t) => t.normalized !== true && t.lstrip !== true && t.rstrip !== true);
}

/**
 * Splits `text` on added-token strings with the library's rule: scan left to right, at each
 * position take the longest added token that starts there. `firsts` (the first characters of the
 * added tokens) lets positions that cannot start one be skipped without a lookup.
 */
export function splitAddedTokens(
  text: string,
  added: ReadonlyMap<string, number>,
  maxLen: number,
  firsts: ReadonlySet<string> = firstChars(added),
): string[] {
  if (added.size === 0) return [text];
  const out: string[] = [];
  let start = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    if (!firsts.has(text.charAt(i))) {
      i++;
      continue;
    }
    let match = '';
    const limit = Math.min(maxLen, n - i);
    for (let len = limit; len > 0; len--) {
      const cand = text.substr(i, len);
      if (added.has(cand)) {
        match = cand;
        break;
      }
    }
    if (match === '') {
      i++;
      continue;
    }
    if (i > start) out.push(text.slice(start, i));
    out.push(match);
    i += match.length;
    start = i;
  }
  if (start < n) out.push(text.slice(start));
  return out;
}

/** First characters of added tokens, to skip the added-token scan on ordinary text quickly. */
function firstChars(added: ReadonlyMap<string, number>): Set<string> {
  return new Set([...added.keys()].map((k) => k.charAt(0)));
}

/** True for ASCII letters. */
function isAsciiLetter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

/**
 * True when `regex` splits runs of ASCII-letter words separated by single spaces into the words
 * with their leading space (`"abc Def gh"` → `abc`, ` Def`, ` gh`), as the GPT-2, Llama 3 and Qwen
 * split patterns do; checked on probes, so an unusual pattern keeps the regex path.
 */
function splitsSpaceWords(regex: RegExp): boolean {
  for (const probe of ['abc Def gh', ' xyz q LONGER Words end', ' a b c']) {
    const pieces: string[] = [];
    const re = new RegExp(regex.source, regex.flags);
    for (let m = re.exec(probe); m !== null && m[0].length > 0; m = re.exec(probe)) pieces.push(m[0]);
    const expected = probe.split(/(?= )/);
    if (pieces.join('\u0000') !== expected.join('\u0000')) return false;
  }
  return true;
}

class FastPromptTokenizer implements PromptTokenizer {
  readonly engine = 'fast' as const;
  readonly cutsAtSpaces: boolean;
  private readonly cache = new Map<string, readonly number[]>();
  private readonly firsts: Set<string>;
  private readonly maxAddedLen: number;
  /** The split pattern cuts plain space-separated ASCII words at the spaces (see {@link splitsSpaceWords}). */
  private readonly spaceWords: boolean;

  constructor(
    private readonly splitRegex: RegExp,
    private readonly byteLevel: { pre_tokenize_text(text: string): string[] },
    private readonly model: BpeModel,
    private readonly added: ReadonlyMap<string, number>,
    private readonly normalizeNfc: boolean,
  ) {
    this.firsts = firstChars(added);
    this.maxAddedLen = Math.max(0, ...[...added.keys()].map((k) => k.length));
    this.spaceWords = splitsSpaceWords(splitRegex);
    this.cutsAtSpaces = this.spaceWords && ![...added.keys()].some((k) => k.includes(' '));
  }

  get tokenIds(): ReadonlyMap<string, number> {
    return this.model.tokens_to_ids;
  }

  prime(pieces: Iterable<readonly [string, number]>): void {
    for (const [piece, id] of pieces) {
      if (this.cache.size >= PIECE_CACHE_LIMIT) return;
      this.cache.set(piece, [id]);
    }
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (const section of this.sections(text)) {
      const addedId = this.added.get(section);
      if (addedId !== undefined) out.push(addedId);
      else this.encodeSection(this.normalizeNfc ? section.normalize('NFC') : section, out);
    }
    return out;
  }

  private sections(text: string): string[] {
    if (this.added.size === 0) return [text];
    let hit = false;
    for (const c of this.firsts) {
      if (text.includes(c)) {
        hit = true;
        break;
      }
    }
    return hit ? splitAddedTokens(text, this.added, this.maxAddedLen, this.firsts) : [text];
  }

  private encodeSection(section: string, out: number[]): void {
    if (section.length === 0) return;
    if (this.spaceWords && this.encodeSpaceWords(section, out)) return;
    const re = this.splitRegex;
    re.lastIndex = 0;
    let prev = 0;
    for (let m = re.exec(section); m !== null; m = re.exec(section)) {
      const piece = m[0];
      if (piece.length === 0) {
        re.lastIndex += (section.codePointAt(re.lastIndex) ?? 0) > 0xffff ? 2 : 1;
        continue;
      }
      if (m.index > prev) this.pushPiece(section.slice(prev, m.index), out);
      this.pushPiece(piece, out);
      prev = m.index + piece.length;
    }
    if (prev < section.length) this.pushPiece(section.slice(prev), out);
  }

  /**
   * Synthesized prompts are ASCII words separated by single spaces: split them at the spaces
   * without the regex (NFC leaves ASCII unchanged). Returns false, with `out` as it was, as soon
   * as the section holds anything else (then the regex path runs).
   */
  private encodeSpaceWords(section: string, out: number[]): boolean {
    const mark = out.length;
    const n = section.length;
    let start = 0;
    for (let i = 0; i < n; i++) {
      const code = section.charCodeAt(i);
      if (isAsciiLetter(code)) continue;
      if (code !== 32 || i + 1 >= n || !isAsciiLetter(section.charCodeAt(i + 1))) {
        out.length = mark;
        return false;
      }
      if (i > start) this.pushPiece(section.slice(start, i), out);
      start = i;
    }
    this.pushPiece(section.slice(start), out);
    return true;
  }

  private pushPiece(piece: string, out: number[]): void {
    let ids = this.cache.get(piece);
    if (ids === undefined) {
      ids = this.encodePiece(piece);
      if (this.cache.size >= PIECE_CACHE_LIMIT) this.cache.clear();
      this.cache.set(piece, ids);
    }
    for (const id of ids) out.push(id);
  }

  private encodePiece(piece: string): number[] {
    const mapped = this.byteLevel.pre_tokenize_text(piece);
    const tokens = this.model.encode(mapped);
    const unk = this.model.unk_token_id;
    const ids: number[] = [];
    for (const t of tokens) {
      const id = this.added.get(t) ?? this.model.tokens_to_ids.get(t) ?? unk;
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }
}

/**
 * The fast encoder for `json`, or null when the library's runtime classes are unavailable or the
 * split pattern is unusable. Call only when {@link isFastPathEligible} holds.
 */
export function buildFastEncoder(json: TokenizerJson): PromptTokenizer | null {
  const steps = json.pre_tokenizer?.pretokenizers ?? [];
  const lib = hf as unknown as HfRuntime;
  if (typeof lib.BPE !== 'function' || typeof lib.SplitPreTokenizer !== 'function') return null;
  const regex = new lib.SplitPreTokenizer(steps[0]).pattern;
  if (regex === null || !regex.global) return null;
  const byteLevel = new lib.ByteLevelPreTokenizer(steps[1]);
  const model = new lib.BPE(json.model);
  const added = new Map<string, number>();
  for (const t of json.added_tokens ?? []) {
    added.set(t.content, t.id);
    model.tokens_to_ids.set(t.content, t.id);
  }
  const nfc = json.normalizer !== null && json.normalizer !== undefined;
  return new FastPromptTokenizer(new RegExp(regex.source, regex.flags), byteLevel, model, added, nfc);
}
