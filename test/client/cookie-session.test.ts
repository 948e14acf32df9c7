// The typed client in cookie + CSRF mode, as the browser board uses it: onAnswer hears every
// answer (a refusal's too, before the throw), so the page keeps the csrfToken a sign-up or
// GET /api/auth/me hands out and reads headers; a write without that token is refused.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BoardApiError, BoardClient, type Answer } from '@agent-board/client';
import { startTestServer, type TestServer } from '../support/server.js';
import { unique } from '../support/temp.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

/** A page's view of the client: a cookie jar (the browser's part) and the token its answers carry. */
function page() {
  const cookies = new Map<string, string>();
  const heard: Answer[] = [];
  let csrf: string | null = null;
  const client = new BoardClient({
    baseUrl: srv.url,
    csrfToken: () => csrf,
    onAnswer: (answer) => {
      heard.push(answer);
      const token = (answer.body as { csrfToken?: unknown } | undefined)?.csrfToken;
      if (typeof token === 'string') csrf = token;
    },
    fetch: async (request) => {
      if (cookies.size) request.headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '));
      const response = await fetch(request);
      for (const line of response.headers.getSetCookie()) {
        const [name, value] = line.split(';')[0]!.split('=');
        cookies.set(name!.trim(), value!.trim());
      }
      return response;
    },
  });
  return { client, heard, csrf: () => csrf, forget: () => void (csrf = null) };
}

it('keeps the csrfToken an answer carries, sends it on writes, and hears a refusal before it is thrown', async () => {
  const p = page();
  const email = `${unique('cookie')}@example.com`;
  const signup = await p.client.post('/api/auth/signup', { body: { email, password: 'correct horse battery staple' } });
  expect(signup.account.email).toBe(email);
  expect(p.csrf()).toBe(signup.csrfToken);
  expect(p.heard.at(-1)).toMatchObject({ body: { csrfToken: signup.csrfToken } });
  expect(p.heard.at(-1)!.response.status).toBe(201);
  expect(p.heard.at(-1)!.response.headers.get('x-request-id')).toEqual(expect.any(String));

  const made = await p.client.post('/api/projects', { body: { name: 'cookie board' } });
  expect(made.projectId).toEqual(expect.any(String));

  // Without the token the same session's write is refused; onAnswer heard the refusal's envelope first.
  p.forget();
  const refused = await p.client.post('/api/projects', { body: { name: 'no token' } }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(BoardApiError);
  expect(refused).toMatchObject({ status: 403, code: 'CSRF_REJECTED' });
  expect(p.heard.at(-1)).toMatchObject({ body: { error: { code: 'CSRF_REJECTED' } } });
  expect(p.heard.at(-1)!.response.status).toBe(403);

  // GET /api/auth/me hands the token out again, and writes work once more.
  const me = await p.client.get('/api/auth/me');
  expect(me.user.email).toBe(email);
  expect(p.csrf()).toBe(me.csrfToken);
  const again = await p.client.post('/api/projects', { body: { name: 'token again' } });
  expect(again.name).toBe('token again');
});
