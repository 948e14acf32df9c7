// The home node's side of forwarding: POST /internal/board-command, outside the route table and
// the OpenAPI document. An envelope that does not open (signature, addressee, stamp, reuse) is
// answered exactly as an unknown path; one that opens is decided as it would be on its entry node.
import type { InternalEndpoint } from '../http/uws.js';
import type { BoardRouter } from './board-router.js';
import { FORWARD_PATH } from './forwarder.js';
import { SIGNATURE_HEADER, type EnvelopeOpener } from './signed-envelope.js';

export function forwardEndpoint(opener: EnvelopeOpener, router: BoardRouter, bodyLimit: number, onRefused: (peer: string) => void): InternalEndpoint {
  return {
    path: FORWARD_PATH,
    bodyLimit,
    async handle(raw) {
      const envelope = opener.open(raw.body, raw.headers[SIGNATURE_HEADER]);
      if (!envelope) {
        onRefused(raw.remoteAddress);
        return null;
      }
      const answer = await router.decideForwarded(envelope.boardId, envelope.command);
      return { status: 200, headers: [['content-type', 'application/json']], body: JSON.stringify(answer) };
    },
  };
}
