// Writing a response to uWS: status and headers in one call, a whole body in one cork, a streamed
// body chunk by chunk, each after uWS has sent what it held (backpressure).
import type uWS from 'uWebSockets.js';
import type { BodyStream } from '../route.js';
import { statusLine, type RawResponse } from '../responses.js';

/**
 * The status line (uWS writes 200 OK unless told otherwise) and the headers, in as few calls as
 * may be: uWS writes each as `name: value` and CRLF, so the lines after a header ride in its
 * value. Each call copies its two strings out of V8 (flattened, measured, encoded); one call a
 * response instead of one a header was a microsecond less a request on the status bench (15
 * headers, 9 of them the rate headers). Lines written once for responses alike (RawResponse.head)
 * go as the bytes they were written to, after the request id. No value holds a CR or LF: each is
 * made here or checked where it comes from the client (the request id), as it had to be with a
 * call each.
 */
function writeHead(res: uWS.HttpResponse, response: RawResponse): void {
  if (response.status !== 200) res.writeStatus(statusLine(response.status));
  const headers = response.headers;
  const head = response.head;
  if (!head || head.count === 0) return writeLines(res, headers, 0);
  res.writeHeader(headers[0]![0], headers[0]![1]);
  res.writeHeader(head.name, head.value);
  writeLines(res, headers, head.count + 1);
}

/** `headers` from `first` on, in one call. */
function writeLines(res: uWS.HttpResponse, headers: RawResponse['headers'], first: number): void {
  if (first >= headers.length) return;
  let lines = headers[first]![1];
  for (let i = first + 1; i < headers.length; i++) lines += `\r\n${headers[i]![0]}: ${headers[i]![1]}`;
  res.writeHeader(headers[first]![0], lines);
}

/**
 * A response whose body is at hand, in one cork: inside uWS's own callback for the request
 * (`inCallback`) uWS has corked the socket already, and a cork of ours would only cost a call
 * into uWS and back.
 */
export function writeWhole(res: uWS.HttpResponse, response: RawResponse, headOnly: boolean, inCallback = false): void {
  if (inCallback) writeCorked(res, response, headOnly);
  else res.cork(() => writeCorked(res, response, headOnly));
}

function writeCorked(res: uWS.HttpResponse, response: RawResponse, headOnly: boolean): void {
  const body = response.body as string | Buffer; // not a stream: pour() writes those
  writeHead(res, response);
  // This build's endWithoutBody(length) never ends the response: name the length ourselves.
  if (headOnly) res.writeHeader('content-length', String(Buffer.byteLength(body))).endWithoutBody();
  else res.end(body, response.close ?? false);
}

/** A response after which the connection closes: its request's body was not read, or not all of it. */
export const closing = (response: RawResponse): RawResponse => ({ ...response, close: true });

/** What a streamed response knows of its client: gone, and how to wake a write waiting for it to read. */
export interface Client {
  gone: boolean;
  wake: ((writable: boolean) => void) | null;
}

/**
 * Writes a streamed body: status and headers, then each chunk in its own cork. When uWS holds what
 * the client has not read yet, the next chunk is asked for only once it is sent (onWritable). A
 * client that goes away ends the iteration; a source that fails mid-way closes the connection (the
 * status is already sent, so only a body cut short can tell the client). HEAD: headers only.
 */
export async function pour(
  res: uWS.HttpResponse,
  response: RawResponse,
  body: BodyStream,
  headOnly: boolean,
  client: Client,
): Promise<void> {
  res.cork(() => {
    writeHead(res, response);
    if (headOnly) res.endWithoutBody();
  });
  if (headOnly) {
    await body[Symbol.asyncIterator]().return?.();
    return;
  }
  const writable = () =>
    new Promise<boolean>((resolve) => {
      client.wake = resolve;
      res.onWritable(() => {
        client.wake = null;
        resolve(true);
        return true;
      });
    });
  try {
    for await (const chunk of body) {
      if (client.gone) return; // leaving the loop ends the source
      if (chunk.length === 0) continue; // an empty write would end the chunked body
      let sent = true;
      res.cork(() => {
        sent = res.write(chunk);
      });
      if (!sent && !(await writable())) return;
    }
    if (!client.gone) res.cork(() => res.end());
  } catch {
    if (client.gone) return;
    client.gone = true;
    res.close();
  }
}
