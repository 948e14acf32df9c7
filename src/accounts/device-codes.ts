// The device flow's two codes (RFC 8628 §6.1): a high-entropy device code only the agent holds,
// and a short user code a person reads off the agent and types. Neither is stored: the device
// code as its sha256, the user code as an HMAC under a server key (about 34 bits: its plain
// sha256 would be reversed offline in seconds by whoever reads the store).
import { createHmac, randomInt } from 'node:crypto';
import { newSecret, sha256 } from '../auth/authenticator.js';

/** RFC 8628's own example alphabet: consonants only, so no 0/O or 1/I to confuse and no words spelled. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;
/** What a user-code field accepts: eight letters, a dash after the fourth or not, any case. */
export const USER_CODE_SHAPE = /^[A-Za-z]{4}-?[A-Za-z]{4}$/;

/** Eight characters of the alphabet, uniformly drawn (20^8, about 34 bits). */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** 32 random bytes, base64url (43 characters). */
export const newDeviceCode = (): string => newSecret(32);

/** `XXXX-XXXX`, as the agent shows it and the page's link carries it. */
export const shownUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

/** The stored form's input (upper case, no dash), or null when it cannot be a user code at all. */
export function normalUserCode(input: string): string | null {
  if (!USER_CODE_SHAPE.test(input)) return null;
  const code = input.replace('-', '').toUpperCase();
  return [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : null;
}

/** The stored form of a device code (the grant's id). */
export const deviceCodeHash = (code: string): string => sha256(code);

/** The stored form of a normalised user code, keyed by the server's user-code key (src/auth/keys.ts). */
export const userCodeDigest = (key: Buffer, code: string): string =>
  createHmac('sha256', key).update(code).digest('hex');
