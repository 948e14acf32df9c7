import { afterAll, describe, expect, inject, it } from 'vitest';
import { openMongoStore } from '../../../store/mongo/index.js';
import { mongoStore } from '../../support/stores.js';
import { Client, startTestServer, type TestServer } from '../../support/server.js';
import { unique } from '../../support/temp.js';
import { until } from '../../support/until.js';
import { verifyEmail } from '../../support/verify-email.js';
import { accessFlow } from './access-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  accessFlow('mongo', mongoStore(uri!));

  describe('two nodes on one store', () => {
    const servers: TestServer[] = [];
    const db = unique('e2e');
    afterAll(async () => {
      for (const s of servers) await s.stop();
      const { MongoClient } = await import('mongodb');
      const client = await MongoClient.connect(uri!);
      await client.db(db).dropDatabase();
      await client.close();
    });

    it('an entry added on one node spares the address on the other within 10 s, and its removal too', async () => {
      const opEmail = `${unique('operator')}@ops.example.com`;
      const env = { OPERATOR_EMAILS: opEmail, ADDRESS_RATE_PER_MINUTE: '1', TRUSTED_PROXIES: '127.0.0.1' };
      for (let i = 0; i < 2; i++) servers.push(await startTestServer(env, await openMongoStore({ uri: uri!, db })));
      const [a, b] = servers as [TestServer, TestServer];
      const op = new Client(a.url, { 'x-forwarded-for': '198.51.100.1' });
      expect((await op.post('/api/auth/signup', { email: opEmail, password: 'operator password 123' })).status).toBe(
        201,
      );
      // An operator's address is confirmed: the link followed in this session from another address
      // (each address has one request a minute here, and the signup spent this one's).
      const elsewhere = Object.assign(new Client(a.url, { 'x-forwarded-for': '198.51.100.2' }), {
        cookies: op.cookies,
        csrfToken: op.csrfToken,
      });
      await verifyEmail(a, opEmail, elsewhere);
      const login = (address: string) =>
        new Client(b.url, { 'x-forwarded-for': address }).post('/api/auth/login', {
          email: `${unique('nobody')}@example.com`, // a sign-in budget of its own: the address's is probed
          password: 'not the password',
        });

      // Each probe comes from an address of its own, first spending its one login a minute, so the
      // next two logins from it say whether it is listed (401) or not (429; at most one of them
      // can fall in a fresh window).
      let probe = 0;
      const listedOnB = async () => {
        probe++;
        const address = `10.20.${Math.floor(probe / 250)}.${(probe % 250) + 1}`;
        await login(address);
        const [second, third] = [await login(address), await login(address)];
        return second.status === 401 && third.status === 401;
      };
      expect(await listedOnB()).toBe(false);
      // Node b reads the list every 10 s: a generous bound for a busy machine.
      expect((await op.post('/api/admin/allowlist', { value: '10.20.0.0/16', reason: 'partner office' })).status).toBe(
        201,
      );
      await until(() => listedOnB(), 20_000);

      expect(
        (
          await op.request('DELETE', '/api/admin/allowlist', {
            json: { value: '10.20.0.0/16', reason: 'partnership over' },
          })
        ).status,
      ).toBe(200);
      await until(async () => !(await listedOnB()), 20_000);
    }, 60_000);
  });
});
