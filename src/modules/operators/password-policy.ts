import { dictionary } from '@zxcvbn-ts/language-common';
import { errors } from '../../platform/errors.js';

/**
 * What a new operator password must be (DESIGN §21, decision 0222, after NIST SP 800-63B §5.1.1.2):
 * at least 12 characters, no composition rules, and not guessable — not a common password, not
 * one character or a short run repeated, not built from the operator's own name or e-mail address.
 */
export const MIN_PASSWORD_LENGTH = 12;

/**
 * Common passwords, lower-case. The list is a maintained package's, never one kept by hand here:
 * `@zxcvbn-ts/language-common` (its `passwords-common` dictionary, ~49 000 entries from breach
 * corpora, most common first).
 */
const COMMON_PASSWORDS: Iterable<string> = dictionary['passwords-common'] as string[];

const common = new Set(Array.from(COMMON_PASSWORDS, (p) => p.toLowerCase()));

/** Words of the operator's own that a password must not be made of: name parts, e-mail local part and domain labels. */
function ownWords(context: { email: string; name: string }): string[] {
  const [local = '', domain = ''] = context.email.toLowerCase().split('@');
  return [...context.name.toLowerCase().split(/[^\p{L}\p{N}]+/u), ...local.split(/[^\p{L}\p{N}]+/u), local, ...domain.split('.')]
    .filter((w) => w.length >= 3)
    .sort((a, b) => b.length - a.length); // longest first, so "asharao" goes before "asha"
}

/** The reason `password` is refused, or null when it may be used. */
export function passwordProblem(password: string, context: { email: string; name: string }): string | null {
  if ([...password].length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  const lower = password.toLowerCase();
  // Trailing digits and symbols added to a common word ("password1234!") make it no less common.
  if (common.has(lower) || common.has(lower.replace(/[^\p{L}]+$/u, ''))) return 'is one of the most common passwords; choose another';
  if (/^(.{1,4})\1+$/su.test(password)) return 'is one character or a short run repeated; choose another';
  let rest = lower;
  for (const word of ownWords(context)) rest = rest.split(word).join('');
  if (rest !== lower && rest.replace(/[^\p{L}]/gu, '').length < 6) return 'is made from your name or e-mail address; choose another';
  return null;
}

/** 400 `validation_failed` on `password`, with a plain message, when the password may not be used. */
export function assertAcceptablePassword(password: string, context: { email: string; name: string }): void {
  const problem = passwordProblem(password, context);
  if (problem) throw errors.invalidField('password', problem);
}
