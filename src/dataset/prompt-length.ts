/**
 * Prompt lengths no served model takes: a trace's `input_length` of 10,000,000 (or `--isl` with a
 * zero too many) built a 67 MB body and sent it without a word. The rule, for every synthesized
 * prompt (a trace row's length, after trace synthesis, or a synthetic dataset's):
 * - above {@link PROMPT_TOKENS_WARN} tokens (2^20, 1,048,576: beyond the context window of nearly
 *   every served model) the run warns, at start and in the summary, naming the first such prompt's
 *   file, line and field (or the flag) and how many there were;
 * - above {@link PROMPT_TOKENS_MAX} tokens (2^24, 16,777,216: beyond every advertised context
 *   window, and a body of 100 MB or more) the run refuses the prompt: a {@link DatasetError} naming
 *   the file, line and field (a streamed trace stops reading there, as at any bad row), or a
 *   {@link ConfigError} naming the flag for synthetic data.
 * Literal prompts (`text_input`, `messages`, `payload`) are sent as written and not checked.
 */
import { ConfigError } from '../errors.js';
import { SYNTHETIC_SOURCE } from './synthetic.js';
import { type Dataset, DatasetError, type StreamedTurn, type Turn } from './types.js';

/** Prompts longer than this many tokens are warned about (2^20). */
export const PROMPT_TOKENS_WARN = 2 ** 20;
/** Prompts longer than this many tokens are refused (2^24). */
export const PROMPT_TOKENS_MAX = 2 ** 24;

/** The trace field a format's prompt length is read from (`input_length` for Bailian and Mooncake). */
const LENGTH_FIELDS: Readonly<Record<string, string>> = {
  burst_gpt_trace: 'Request tokens',
  azure_trace: 'ContextTokens',
};

/** Where prompt lengths come from: the flag that set them (synthetic data), or the dataset type's field. */
export interface LengthSource {
  /** `--isl` or `--seq-dist` for synthetic data. */
  flag: string;
  /** `--custom-dataset-type` of a file. */
  datasetType?: string | undefined;
  /** Trace synthesis scales lengths (`--synthesis-prompt-len-multiplier` ≠ 1): said after the value. */
  scaled?: boolean;
}

/**
 * Counts the prompts over {@link PROMPT_TOKENS_WARN} of a run and refuses one over
 * {@link PROMPT_TOKENS_MAX}; `onFirst` hears of the first long one at once (a streamed trace
 * meets it mid-run).
 */
export class PromptLengthCheck {
  private count = 0;
  private first: string | null = null;

  constructor(
    private readonly source: LengthSource,
    private readonly onFirst: (warning: string) => void = () => undefined,
  ) {}

  /**
   * Checks one turn's prompt length.
   * @throws {DatasetError} naming file, line and field (a file's row); {ConfigError} naming the flag
   *   (synthetic data), for a prompt over {@link PROMPT_TOKENS_MAX} tokens.
   */
  check(turn: Turn): void {
    if (turn.prompt.kind !== 'synthetic') return;
    const tokens = turn.prompt.inputLength;
    if (tokens <= PROMPT_TOKENS_WARN) return;
    const where = this.where(turn, tokens);
    if (tokens > PROMPT_TOKENS_MAX) {
      const why = `more than ${PROMPT_TOKENS_MAX} tokens (2^24) is beyond every model's context window, and a body of over 100 MB: check the value`;
      if (turn.source.file === SYNTHETIC_SOURCE) throw new ConfigError(`${where}: ${why}`, this.source.flag);
      throw new DatasetError(`${where}: ${why}`, turn.source.file, turn.source.line, this.field());
    }
    this.count++;
    if (this.first !== null) return;
    this.first = where;
    this.onFirst(this.warningText());
  }

  /**
   * Refuses a turn over {@link PROMPT_TOKENS_MAX} without counting it (a streamed trace's first row,
   * read before the run starts). @throws as {@link PromptLengthCheck.check}.
   */
  refuse(turn: Turn): void {
    if (turn.prompt.kind === 'synthetic' && turn.prompt.inputLength > PROMPT_TOKENS_MAX) this.check(turn);
  }

  /** Checks every turn of a dataset loaded whole. @throws as {@link PromptLengthCheck.check}. */
  checkAll(dataset: Dataset): void {
    for (const c of dataset.conversations) for (const t of c.turns) this.check(t);
  }

  /** The rows of `turns`, each checked as it passes (a bad one ends the stream with its error). */
  async *watch(turns: AsyncIterable<StreamedTurn>): AsyncGenerator<StreamedTurn> {
    for await (const row of turns) {
      this.check(row.turn);
      yield row;
    }
  }

  /** The summary's warning about the long prompts met so far; null when there were none. */
  warning(): string | null {
    return this.first === null ? null : this.warningText();
  }

  private warningText(): string {
    // Counted over the input (a dataset's entries, sent or not; a stream's rows read so far).
    const many = this.count === 1 ? '1 prompt of the input asks' : `${this.count} prompts of the input ask`;
    return `${many} for more than ${PROMPT_TOKENS_WARN} tokens (2^20), beyond the context window of nearly every served model (first: ${this.first}); each is sent as a body of several MB: check the input`;
  }

  private field(): string {
    return LENGTH_FIELDS[this.source.datasetType ?? ''] ?? 'input_length';
  }

  private where(turn: Turn, tokens: number): string {
    if (turn.source.file === SYNTHETIC_SOURCE) return `${this.source.flag}: a prompt of ${tokens} tokens`;
    const scaled = this.source.scaled === true ? ' (after --synthesis-prompt-len-multiplier)' : '';
    return `${turn.source.file}:${turn.source.line}: field "${this.field()}": ${tokens} tokens${scaled}`;
  }
}
