// The command line's fetch: a request over node:http(s), answered as a fetch Response. Node's own
// fetch (undici) parses HTTP with a WebAssembly module that V8 compiles for about 150 ms in the
// background after the first call, and a process cannot end before that compilation has: a short
// command such as `status` spent half its time waiting for it. The board's answers are small JSON
// bodies, so this reads each whole. A redirect (a board behind a proxy that sends http to https)
// is handed to fetch itself, whose rules for following one (methods, bodies, credentials across
// origins) are the platform's.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Answers without a body whatever the server sends (the Response constructor refuses one for them). */
const NO_BODY = new Set([101, 204, 205, 304]);

const REDIRECT = new Set([301, 302, 303, 307, 308]);

export async function httpFetch(request: Request): Promise<Response> {
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : null;
  const answer = await send(request, body);
  if (!REDIRECT.has(answer.status) || !answer.headers.has('location')) return answer;
  const again = body && new Blob([body]); // (a Blob: fetch reads it again for a 307, where a buffer it has sent is spent)
  return fetch(request.url, { method: request.method, headers: request.headers, body: again, signal: request.signal });
}

function send(request: Request, body: Buffer | null): Promise<Response> {
  const url = new URL(request.url);
  const open = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Response>((resolve, reject) => {
    const req = open(url, { method: request.method, headers: Object.fromEntries(request.headers) }, (res) =>
      readAnswer(res, request.method).then(resolve, (error: unknown) =>
        reject(new TypeError('fetch failed', { cause: error })),
      ),
    );
    const abort = () => {
      reject(request.signal.reason); // as fetch does: the signal's reason, an AbortError unless given one
      req.destroy();
    };
    if (request.signal.aborted) abort();
    request.signal.addEventListener('abort', abort, { once: true });
    // As fetch does: a request that got no answer is a TypeError, its cause the network's error.
    req.once('error', (error) => reject(new TypeError('fetch failed', { cause: error })));
    req.once('close', () => request.signal.removeEventListener('abort', abort));
    req.end(body ?? undefined);
  });
}

async function readAnswer(res: IncomingMessage, method: string): Promise<Response> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const status = res.statusCode ?? 502;
  const empty = method === 'HEAD' || NO_BODY.has(status);
  return new Response(empty ? null : Buffer.concat(chunks), {
    status,
    statusText: res.statusMessage ?? '',
    headers,
  });
}
