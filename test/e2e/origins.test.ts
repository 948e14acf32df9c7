// Which browser origins may write and open sockets, over HTTP with the Origin header a browser
// sends: without PUBLIC_URL the loopback names at the port actually taken; ALLOWED_ORIGINS adds
// more; with PUBLIC_URL, its origin (what a proxy in front serves) and ALLOWED_ORIGINS only.
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';
import { unique } from '../support/temp.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function node(env: Record<string, string>): Promise<TestServer> {
  const s = await startTestServer({ ADDRESS_RATE_PER_MINUTE: '1000', ...env });
  servers.push(s);
  return s;
}

/** A signup as a page at `origin` would send it: 201, or 403 CSRF_REJECTED. */
async function signupFrom(s: TestServer, origin: string): Promise<number> {
  return (
    await new Client(s.url).post(
      '/api/auth/signup',
      { email: `${unique('o')}@example.com`, password: 'correct horse battery staple' },
      { origin },
    )
  ).status;
}

/** A socket upgrade with a Bearer token from a page at `origin`: 'open', or the refusal's status. */
async function socketFrom(s: TestServer, origin: string): Promise<string | number> {
  const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}/api/ws`, {
    headers: { origin, authorization: 'Bearer agb_not_a_real_token_but_the_origin_is_checked_first' },
  });
  return new Promise((resolve) => {
    ws.once('open', () => (ws.close(), resolve('open')));
    ws.once('unexpected-response', (_req, res) => (resolve(res.statusCode ?? 0), ws.terminate()));
    ws.once('error', () => undefined);
  });
}

describe('allowed origins', () => {
  it('without PUBLIC_URL: http://localhost, 127.0.0.1 and [::1] at the port taken, plus ALLOWED_ORIGINS; nothing else', async () => {
    const s = await node({ PUBLIC_URL: '', ALLOWED_ORIGINS: 'https://board.example, http://other.example:9000/' });
    const port = s.server.port;
    expect(port).not.toBe(8080);
    for (const origin of [
      `http://localhost:${port}`,
      `http://127.0.0.1:${port}`,
      `http://[::1]:${port}`,
      'https://board.example',
      'http://other.example:9000',
    ]) {
      expect(await signupFrom(s, origin), origin).toBe(201);
    }
    for (const origin of [
      'http://localhost:8080',
      `https://localhost:${port}`,
      `http://127.0.0.2:${port}`,
      'http://board.example',
      'https://evil.example',
      'null',
    ]) {
      expect(await signupFrom(s, origin), origin).toBe(403);
    }
    // The socket follows the same rule: refused for the origin before any credential is looked at.
    expect(await socketFrom(s, 'https://evil.example')).toBe(403);
    expect(await socketFrom(s, `http://127.0.0.1:${port}`)).toBe(401);
  });

  it('with PUBLIC_URL (behind a proxy): its origin and ALLOWED_ORIGINS, not the loopback names', async () => {
    const s = await node({ PUBLIC_URL: 'https://board.example.com', ALLOWED_ORIGINS: 'https://www.board.example.com' });
    expect(await signupFrom(s, 'https://board.example.com')).toBe(201);
    expect(await signupFrom(s, 'https://www.board.example.com')).toBe(201);
    expect(await signupFrom(s, `http://127.0.0.1:${s.server.port}`)).toBe(403);
    expect(await signupFrom(s, 'http://board.example.com')).toBe(403);
  });

  it('PUBLIC_URL defaults to http://localhost:PORT (links in mail and errors)', () => {
    expect(loadConfig({ PORT: '9000' }).publicUrl).toBe('http://localhost:9000');
    expect(loadConfig({}).publicUrl).toBe('http://localhost:8080');
  });

  it.each([['board.example'], ['https://board.example/path'], ['ftp://board.example'], ['https://a.example, nope']])(
    'ALLOWED_ORIGINS=%s is refused at start, naming the variable',
    (value) => {
      expect(() => loadConfig({ ALLOWED_ORIGINS: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ALLOWED_ORIGINS: value })).toThrow(/^invalid configuration: ALLOWED_ORIGINS: /);
    },
  );
});
