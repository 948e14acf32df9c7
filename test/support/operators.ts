// Operators for tests: a server with OPERATOR_EMAILS, and an operator signed in as the console would be.
import { Client, signedUp, type TestServer } from './server.js';
import { unique } from './temp.js';
import { signedInAs, verifyEmail } from './verify-email.js';

export const operatorEmail = (): string => `${unique('operator')}@ops.example.com`;

/**
 * Signs up `email` and returns its session client. Its address is unconfirmed, so it is no operator
 * yet, listed or not (DOMAIN.md "Operators"): confirmedOperator follows the link too.
 */
export async function operatorSession(base: string, email: string): Promise<{ client: Client; accountId: string }> {
  const client = new Client(base);
  const res = await client.post('/api/auth/signup', { email, password: 'operator password 123' });
  if (res.status !== 201) throw new Error(`operator signup failed: ${res.status} ${res.text}`);
  return { client, accountId: res.body.account.id };
}

/** Signs up `email` (named in the server's OPERATOR_EMAILS), confirms it with the link mailed to it, and returns its session client. */
export async function confirmedOperator(
  srv: Pick<TestServer, 'url' | 'mail'>,
  email: string,
): Promise<{ client: Client; accountId: string }> {
  const session = await operatorSession(srv.url, email);
  await verifyEmail(srv, email, session.client);
  return session;
}

/**
 * A page's sign-in as an operator (signerIn in browser.ts) that confirms `email` with the link
 * mailed to it after the first one, the sign-up, as its person would. `srv` is read then: a
 * suite's server starts in its beforeAll.
 */
export function confirmingSignIn<P>(
  srv: () => Pick<TestServer, 'url' | 'mail'>,
  email: string,
  signIn: (page: P) => Promise<void>,
  password = 'correct horse battery staple',
): (page: P) => Promise<void> {
  let confirmed = false;
  return async (page) => {
    await signIn(page);
    if (confirmed) return;
    await verifyEmail(srv(), email, await signedInAs(srv().url, email, password));
    confirmed = true;
  };
}

export { signedUp };
