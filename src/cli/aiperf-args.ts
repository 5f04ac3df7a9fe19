/**
 * AIPerf's option names on a `tokenload profile` command line, mapped before commander parses it
 * (commander takes at most two long names per option): an alias becomes tokenload's flag, an option
 * accepted with no effect is dropped, a refused one fails at once with its reason, and several values
 * after a repeatable option (AIPerf's `--extra-inputs a:1 b:2`) become the flag repeated. A flag the
 * command itself defines is always taken as it is, whatever the table says, so an option tokenload
 * gains later is never shadowed by an old refusal. Everything else is left to commander.
 */
import { ConfigError } from '../errors.js';
import { type AiperfOption, aiperfOption, refusalMessage } from './aiperf-options.js';

/** What the mapping needs to know of one of the command's own options. */
export interface OwnOption {
  /** The option's identity: its long and short flags (and a `--no-` form) share it. */
  id: string;
  /** Its long flag, as `--help` shows it. */
  long: string;
  takesValue: boolean;
  /** Given many times, its values accumulate (`--url`, `--extra-inputs`, `-H`, `-m`). */
  repeatable: boolean;
}

/** The command's option of `flag` (long or short, as typed), or undefined. */
export type OwnOptionLookup = (flag: string) => OwnOption | undefined;

/** How each option was first set (by id), to catch an AIPerf name and another setting the same option. */
type Seen = Map<string, { spelling: string; viaAlias: boolean }>;

/**
 * The command line `args` (after `profile`) with AIPerf's names mapped (see the module comment).
 * @throws {ConfigError} naming the flag: a refused AIPerf option (its reason), an accepted one with
 *   another value or without one, or one option set under two names (an alias and tokenload's).
 */
export function mapAiperfArgs(args: readonly string[], lookup: OwnOptionLookup): string[] {
  const out: string[] = [];
  const seen: Seen = new Map();
  let i = 0;
  while (i < args.length) {
    const token = args[i] as string;
    if (token === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (isFlag(token)) {
      i = mapFlag(args, i, { lookup, seen, out });
    } else {
      out.push(token);
      i++;
    }
  }
  return out;
}

/** An argument that names an option (`-x`, `--name`, `--name=value`), not a value. */
const isFlag = (arg: string): boolean => arg.startsWith('-') && arg !== '-';

/** What {@link mapFlag} works with. */
interface MapState {
  lookup: OwnOptionLookup;
  seen: Seen;
  /** The mapped arguments so far. */
  out: string[];
}

/**
 * Maps the option at `args[i]` (and its values) onto `state.out`.
 * @returns the index of the next argument to map.
 * @throws {ConfigError} as {@link mapAiperfArgs}.
 */
function mapFlag(args: readonly string[], i: number, state: MapState): number {
  const token = args[i] as string;
  const eq = token.startsWith('--') ? token.indexOf('=') : -1;
  const typed = eq > 0 ? token.slice(0, eq) : token;
  const inline = eq > 0 ? token.slice(eq + 1) : undefined;
  const row = state.lookup(typed) === undefined ? aiperfOption(typed) : undefined;
  if (row?.status.kind === 'refused' || row?.status.kind === 'accepted')
    return i + 1 + checkUnused(row, inline, args[i + 1]);
  const flag = row?.status.kind === 'alias' ? row.status.ours : typed;
  const own = state.lookup(flag);
  if (own !== undefined) noticeTwice(state.seen, own, typed, row !== undefined);
  state.out.push(inline === undefined ? flag : `${flag}=${inline}`);
  let next = i + 1;
  if (own !== undefined && !own.takesValue) strayValue(own, typed, inline, args[next]);
  if (own === undefined || !own.takesValue || inline !== undefined) return next;
  if (next < args.length) state.out.push(args[next++] as string);
  // AIPerf's list options take several values after one flag; tokenload's take the flag repeated.
  while (own.repeatable && next < args.length && !isFlag(args[next] as string))
    state.out.push(flag, args[next++] as string);
  return next;
}

/** What a value given to a switch probably meant, by the switch's long flag. */
const STRAY_VALUE_HINTS: Record<string, string> = {
  '--server-timing':
    '; to make the built-in simulator send vLLM- or llama.cpp-shaped timing, give --simulator-option server-timing=vllm (or =llamacpp)',
};

/**
 * Refuses a switch (an option that takes no value) followed by a value, or given one after `=`:
 * commander would only say "too many arguments" or "unknown option" without naming the switch.
 * @throws {ConfigError} naming the switch and the value, with a hint where one is known.
 */
function strayValue(
  own: OwnOption,
  typed: string,
  inline: string | undefined,
  next: string | undefined,
): void {
  const value = inline ?? (next === undefined || isFlag(next) ? undefined : next);
  if (value === undefined) return;
  const given = inline === undefined ? `"${value}" follows it` : `"${typed}=${value}" gives it one`;
  const hint = STRAY_VALUE_HINTS[own.long] ?? '';
  throw new ConfigError(`${typed} takes no value, but ${given}${hint}.`, own.long);
}

/**
 * Checks an AIPerf option that is not mapped onto one of ours: refused, or accepted (only with its
 * value). Returns how many following arguments it consumed (its value: 0 or 1).
 * @throws {ConfigError} for a refused option, or an accepted one with another value or none.
 */
function checkUnused(row: AiperfOption, inline: string | undefined, next: string | undefined): number {
  const status = row.status;
  if (status.kind !== 'accepted') throw new ConfigError(refusalMessage(row), row.flag);
  if (status.anyValue === true) return inline !== undefined || next === undefined || isFlag(next) ? 0 : 1;
  if (status.value === undefined) {
    if (inline !== undefined) throw new ConfigError(refusalMessage(row, inline), row.flag);
    return 0;
  }
  const value = inline ?? next;
  if (value === undefined || (inline === undefined && value.startsWith('-')))
    throw new ConfigError(`${row.flag} needs a value (tokenload takes ${status.value}).`, row.flag);
  if (value !== status.value) throw new ConfigError(refusalMessage(row, value), row.flag);
  return inline === undefined ? 1 : 0;
}

/**
 * Remembers that `typed` set `own`; an option that is not repeatable, set both under an AIPerf name
 * and another name, is refused (one of the two values would be dropped without a word).
 * @throws {ConfigError} naming both spellings.
 */
function noticeTwice(seen: Seen, own: OwnOption, typed: string, viaAlias: boolean): void {
  const spelling = viaAlias ? `${typed} (AIPerf's name for ${own.long})` : typed;
  const first = seen.get(own.id);
  if (first === undefined) {
    seen.set(own.id, { spelling, viaAlias });
    return;
  }
  if (own.repeatable || first.spelling === spelling || !(viaAlias || first.viaAlias)) return;
  throw new ConfigError(`${first.spelling} and ${spelling} set the same option; give it once.`, own.long);
}
