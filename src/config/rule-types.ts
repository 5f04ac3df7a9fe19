/**
 * The shape of a cross-field rule, the leaf of the configuration folder: rules of every `--help`
 * group (`./rules*.ts`) import it, and it imports nothing of theirs.
 */
import type { ProfileFields } from './fields.js';

/**
 * The fields a rule reads: the configuration as given, after per-field defaults and before
 * cross-field resolution ({@link ProfileFields}, derived from the schema).
 */
export type RuleInput = ProfileFields;

/** One cross-field rule: the flag it is reported under, and its check. */
export interface ConfigRule {
  /** The flag a violation is reported under (`ConfigError.option`). */
  option: string;
  /** The message of the violation, naming every flag involved, or null when the rule holds. */
  check(c: RuleInput): string | null;
}
