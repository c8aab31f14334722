import { MAX_SAFE_INTEGER } from "./constants";

// Characters of "e" plus the exponent digits needed to drop `zeros` trailing zeros (1 <= zeros <= 15).
const exponentLength = (zeros: number) => (zeros < 10 ? 2 : 3);

/**
 * A lower bound of the characters of any JSON number literal that JSON.parse reads as `value`.
 * It is the shortest literal itself for safe integers (but round ones of 4+ digits, where
 * "12e3" is shorter than 12000 and the bound follows it) and for numbers of one decimal from
 * 0.1 up; for other numbers it falls short by the decimals past the first (no `String` call:
 * this runs for every number of every payload).
 *
 * Why it holds. A safe integer of d digits has no literal of fewer significant digits (each
 * such decimal is another integer, read exactly), so only an exponent dropping trailing zeros is
 * shorter, and an exponent takes at least 3 characters. A finite non-integer is read from no
 * integer literal, so it needs a fraction digit: "I.f" (I its integer digits, "0" below 1) or an
 * exponent form of at least as many digits plus "e" and a digit; below 0.1 either takes 4.
 */
export function literalLengthBound(value: number): number {
  const magnitude = Math.abs(value);
  const sign = value < 0 ? 1 : 0;
  if (!(magnitude <= MAX_SAFE_INTEGER)) return 1;
  let digits = 1;
  for (let power = 10; power <= magnitude; power *= 10) digits++;
  if (!Number.isInteger(magnitude)) return sign + (magnitude >= 0.1 ? digits + 2 : 4);
  if (digits <= 3 || magnitude % 10 !== 0) return sign + digits;
  let significant = digits;
  for (let rest = magnitude; rest % 10 === 0; rest /= 10) significant--;
  return sign + Math.min(digits, significant + exponentLength(digits - significant));
}
