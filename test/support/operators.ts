// Operators for tests: a server with OPERATOR_EMAILS, and an operator signed in as the console would be.
import { Client, signedUp } from './server.js';
import { unique } from './temp.js';

export const operatorEmail = (): string => `${unique('operator')}@ops.example.com`;

/** Signs up `email` (named in the server's OPERATOR_EMAILS) and returns its session client. */
export async function operatorSession(base: string, email: string): Promise<{ client: Client; accountId: string }> {
  const client = new Client(base);
  const res = await client.post('/api/auth/signup', { email, password: 'operator password 123' });
  if (res.status !== 201) throw new Error(`operator signup failed: ${res.status} ${res.text}`);
  return { client, accountId: res.body.account.id };
}

export { signedUp };
