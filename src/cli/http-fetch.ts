// The command line's fetch: a request over node:http(s), answered as a fetch Response. Node's own
// fetch (undici) parses HTTP with a WebAssembly module that V8 compiles for about 150 ms in the
// background after the first call, and a process cannot end before that compilation has: a short
// command such as `status` spent half its time waiting for it. The board's answers are small JSON
// bodies, so this reads each whole. A redirect (a board behind a proxy that sends http to https)
// is handed to fetch itself, whose rules for following one (methods, bodies, credentials across
// origins) are the platform's. A board (or anything between) that takes the request and never
// answers is given up on after a time-out, failing as fetch does when nothing answers.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Answers without a body whatever the server sends (the Response constructor refuses one for them). */
const NO_BODY = new Set([101, 204, 205, 304]);

const REDIRECT = new Set([301, 302, 303, 307, 308]);

/** How long a request waits for the board's whole answer unless told otherwise (--timeout, BOARD_TIMEOUT_SECONDS). */
export const ANSWER_TIMEOUT_SECONDS = 30;

/**
 * The fetch, giving up on a request whose whole answer has not come within `seconds`: a TypeError
 * "fetch failed" as when nothing answers (exit 6), its cause saying how long it waited.
 */
export function fetchWithin(seconds: number): (request: Request) => Promise<Response> {
  return async (request) => {
    const timeout = AbortSignal.timeout(seconds * 1000);
    const signal = AbortSignal.any([request.signal, timeout]);
    try {
      const body = request.body ? Buffer.from(await request.arrayBuffer()) : null;
      const answer = await send(request, body, signal);
      if (!REDIRECT.has(answer.status) || !answer.headers.has('location')) return answer;
      const again = body && new Blob([body]); // (a Blob: fetch reads it again for a 307, where a buffer it has sent is spent)
      return await fetch(request.url, { method: request.method, headers: request.headers, body: again, signal });
    } catch (error) {
      if (!timeout.aborted || request.signal.aborted) throw error;
      throw new TypeError('fetch failed', { cause: new Error(`no answer from the board within ${seconds} s`) });
    }
  };
}

function send(request: Request, body: Buffer | null, signal: AbortSignal): Promise<Response> {
  const url = new URL(request.url);
  const open = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Response>((resolve, reject) => {
    // Heard until the whole answer is read: a body that stalls is given up on too.
    const abort = () => {
      reject(signal.reason); // as fetch does: the signal's reason, an AbortError unless given one
      req.destroy();
    };
    const settle =
      <T>(to: (value: T) => void) =>
      (value: T) => {
        signal.removeEventListener('abort', abort);
        to(value);
      };
    const req = open(url, { method: request.method, headers: Object.fromEntries(request.headers) }, (res) =>
      readAnswer(res, request.method).then(settle(resolve), (error: unknown) =>
        settle(reject)(new TypeError('fetch failed', { cause: error })),
      ),
    );
    if (signal.aborted) abort();
    signal.addEventListener('abort', abort, { once: true });
    // As fetch does: a request that got no answer is a TypeError, its cause the network's error.
    req.once('error', (error) => settle(reject)(new TypeError('fetch failed', { cause: error })));
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
