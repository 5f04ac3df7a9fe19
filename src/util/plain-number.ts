/**
 * Numbers typed as text (a flag's value, a string in a `-f` config file, an item of a list flag,
 * a `--goodput` threshold): only plain decimal is a number. JavaScript's `Number()` also reads
 * `0x1`, `0b1`, ` 1` (spaces), `1e3` and `Infinity`, so `--shard-index 0x1` was shard 1 and
 * `--request-count 1e3` a thousand requests; such text is now refused, naming what was typed.
 * An integer is an optional minus and digits; a number may have a fraction and an exponent.
 */

const PLAIN_INTEGER = /^-?\d+$/;
const PLAIN_DECIMAL = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** `text` as a number when it is plain decimal (an integer: digits only); undefined otherwise. */
export function plainNumber(text: string, integer: boolean): number | undefined {
  return (integer ? PLAIN_INTEGER : PLAIN_DECIMAL).test(text) ? Number(text) : undefined;
}

/**
 * Text `Number()` reads as a number although it is not plain decimal (`0x1`, ` 1`, `1e3` or `1.0`
 * for an integer, `Infinity`): a value a user may believe was taken.
 */
export function looksNumeric(text: string, integer: boolean): boolean {
  return plainNumber(text, integer) === undefined && text.trim() !== '' && !Number.isNaN(Number(text));
}

/** What a user reads after the flag for such text: `expected an integer in plain decimal digits, got "0x1"`. */
export function plainNumberProblem(text: string, integer: boolean): string {
  const expected = integer ? 'an integer in plain decimal digits' : 'a number in plain decimal notation';
  return `expected ${expected}, got ${JSON.stringify(text)}`;
}
