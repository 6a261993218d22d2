// Byte-level JSON: the characters a scanner looks at, and the error every JSON reader reports.
import { BadRequestError } from '../errors.ts';

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const MINUS = 0x2d;
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;

export const isSpace = (b: number) => b === 0x20 || b === LF || b === CR || b === TAB;
export const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

/** CKAN's error for a body (or part of one) that is not JSON. */
export function jsonError(e: unknown): BadRequestError {
  return new BadRequestError(`Bad request - JSON Error: Error decoding JSON data. Error: ${(e as Error).message}`);
}
