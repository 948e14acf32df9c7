// The home node's side of forwarding: the peers' channel at /internal/peer, outside the route
// table and the OpenAPI document. A hello that does not open (signature, addressee, stamp, reuse)
// is answered exactly as an unknown path; a frame that does not open (signature, number) closes
// the channel with nothing of it decided. Each command is decided as it would be on its entry
// node; the answers settled together (a group commit's) go back in one frame as their microtasks
// drain (src/cluster/forwarder.ts says why not at the end of the loop's turn). While the node
// drains, commands are answered `retry` undecided, so their entry node sends them to the board's
// next home. A frame larger than the largest command needs (src/cluster/wire.ts) closes the
// channel as a frame that does not open does; an answer larger than an entry may be goes back as
// `tooLarge`.
import { isBoardCommand, type BoardCommand } from '../board/commands.js';
import { BODY_LIMIT_BYTES } from '../config.js';
import type { PeerEndpoint, PeerLink } from '../http/uws.js';
import type { BoardRouter } from './board-router.js';
import { frameBounds, PEER_PATH } from './forwarder.js';
import { ChannelEnd, channelKey, entryOf, HELLO_HEADER, type EnvelopeOpener, type Entry } from './signed-envelope.js';
import type { Answer } from './wire.js';

const wellFormed = (entry: unknown): entry is [number, string, BoardCommand] =>
  Array.isArray(entry) &&
  entry.length === 3 &&
  Number.isSafeInteger(entry[0]) &&
  typeof entry[1] === 'string' &&
  isBoardCommand(entry[2]);

/**
 * Frames up to twice the bound reach a session, so one past it is refused (and logged) here; uWS
 * drops a larger one with the connection.
 */
const TRANSPORT_HEADROOM = 2;

/** `bodyLimitBytes`: the node's BODY_LIMIT_BYTES, which the peers share; it bounds the frames either way. */
export function forwardEndpoint(
  forwardKey: Buffer,
  opener: EnvelopeOpener,
  router: BoardRouter,
  onRefused: (peer: string, what: 'hello' | 'frame') => void,
  bodyLimitBytes = BODY_LIMIT_BYTES,
): PeerEndpoint {
  const bounds = frameBounds(bodyLimitBytes);
  return {
    path: PEER_PATH,
    maxPayloadLength: bounds.frame * TRANSPORT_HEADROOM,
    admit(headers, peer) {
      const hello = opener.open(headers[HELLO_HEADER]);
      if (!hello) {
        onRefused(peer, 'hello');
        return null;
      }
      const frames = new ChannelEnd(channelKey(forwardKey, hello.nonce), 'to-entry', bounds.entry);
      let link: PeerLink | null = null;
      let answers: Entry[] = [];
      const flush = () => {
        const out = answers;
        answers = [];
        for (const frame of frames.seal(out)) link?.send(frame);
      };
      const answer = (id: number, a: Answer) => {
        const entry = entryOf([id, a]);
        if (answers.push(entry.bytes > bounds.entry ? entryOf([id, { tooLarge: true }]) : entry) === 1)
          queueMicrotask(flush);
      };
      return {
        opened(l) {
          link = l;
        },
        message(frame, accepting) {
          const commands = Buffer.byteLength(frame) > bounds.frame ? null : frames.open(frame);
          if (!commands?.every(wellFormed)) {
            onRefused(peer, 'frame');
            link?.close();
            return;
          }
          if (!accepting) {
            for (const [id] of commands) answer(id, { retry: true });
            return;
          }
          return Promise.all(
            commands.map(([id, boardId, command]) =>
              router.decideForwarded(boardId, command).then((a) => answer(id, a)),
            ),
          ).then(() => undefined);
        },
        closed() {
          link = null;
          answers = [];
        },
      };
    },
  };
}
