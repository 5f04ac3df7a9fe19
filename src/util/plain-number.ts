/**
 * Numbers typed as text (a flag's value, a string in a `-f` config file, an item of a list flag,
 * a `--goodput` threshold), one rule everywhere: a number is a decimal number, with an optional
 * minus, fraction and exponent (`2.5`, `1000`, `1e3`); an integer is digits only (`1000`), so `1e3`
 * and `1.0` are refused for an integer. JavaScript's `Number()` also reads `0x1`, `0b1`, ` 1`
 * (spaces) and `Infinity`, so `--shard-index 0x1` was shard 1; such text is refused, naming what
 * was typed ({@link plainNumberProblem}: the message states the rule, as docs/running.md does).
 */

const PLAIN_INTEGER = /^-?\d+$/;
const PLAIN_DECIMAL = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** `text` as a number when it is a decimal number (an integer: digits only); undefined otherwise. */
export function plainNumber(text: string, integer: boolean): number | undefined {
  return (integer ? PLAIN_INTEGER : PLAIN_DECIMAL).test(text) ? Number(text) : undefined;
}

/**
 * Text `Number()` reads as a number although the rule refuses it (`0x1`, ` 1`, `Infinity`, and
 * `1e3` or `1.0` for an integer): a value a user may believe was taken.
 */
export function looksNumeric(text: string, integer: boolean): boolean {
  return plainNumber(text, integer) === undefined && text.trim() !== '' && !Number.isNaN(Number(text));
}

/** The rule as a user reads it: `a decimal number (2.5, 1000, 1e3)`, or `an integer, digits only (1000)`. */
export function numberRule(integer: boolean): string {
  return integer ? 'an integer, digits only (1000)' : 'a decimal number (2.5, 1000, 1e3)';
}

/** What a user reads after the flag for such text: `expected an integer, digits only (1000), got "0x1"`. */
export function plainNumberProblem(text: string, integer: boolean): string {
  return `expected ${numberRule(integer)}, got ${JSON.stringify(text)}`;
}
