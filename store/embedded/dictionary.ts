// The LZ4 dictionary the embedded store compresses documents and board entries with: records of
// the shapes a board writes (events, items, its header, usage, audit, tokens, accounts), encoded
// as stored. A value of a few hundred bytes has too little history of its own for LZ4 to find
// much; against these it finds its field names and common strings (issue 46: 0.43 times the bytes
// on the tenants bench's boards). A data directory keeps the dictionary it was first compressed
// with (in _meta), so editing the samples here only changes what new directories use.
import type { Database } from 'lmdb';
import type { Writer } from './writer.js';

const KEY = 'compression:dictionary';

const ID = '00000000-0000-4000-8000-000000000000';
const AGENT = `agent:${ID}`;
const AT = '2026-01-01T00:00:00.000Z';
const LEASE = { holder: AGENT, purpose: 'work', fencingToken: 1, expiresAt: AT };
const COUNTS = {
  pending: 0,
  ready: 5,
  claimed: 0,
  awaiting_verify: 0,
  verifying: 0,
  done: 1,
  blocked: 0,
  cancelled: 0,
};
const CREATED = {
  workId: 'W-1',
  title: 'item 0',
  description: '',
  type: 'task',
  priority: 0,
  rank: null,
  parentId: null,
  dependsOn: [],
  verify: 'none',
  criteria: [],
  doctrine: [],
  spec: [],
  labels: [],
  state: 'ready',
  attempts: 0,
  maxAttempts: 3,
  lease: null,
  submission: null,
  verifications: [],
  finding: null,
  overridden: null,
  blockedReason: null,
  progress: null,
  createdAt: AT,
  updatedAt: AT,
  version: 1,
};
const event = (seq: number, type: string, data: Record<string, unknown>) => ({
  _id: `${ID}:${seq}`,
  boardId: ID,
  seq,
  type,
  actor: AGENT,
  workId: 'W-1',
  at: 1_767_225_600_000,
  data,
});
const submission = { head: 'abcdef1', by: AGENT, at: AT };
const claimed = { workId: 'W-1', version: 2, state: 'claimed', lease: LEASE, updatedAt: AT };
const done = { workId: 'W-1', version: 3, state: 'done', lease: null, submission, updatedAt: AT };

/** Least likely first: LZ4 prefers no offset over another, but the last samples are the ones most often matched. */
const SAMPLES: Record<string, unknown>[] = [
  { _id: ID, version: 1, name: 'Agent board', ownerId: ID, plan: 'free', createdAt: 1, lastActivityAt: 1 },
  { _id: `${ID}:${ID}`, version: 1, projectId: ID, accountId: ID, role: 'owner', acceptedAt: 1 },
  { _id: ID, version: 1, claimSecretHash: '0'.repeat(64), createdAt: 1, expiresAt: 1 },
  {
    _id: ID,
    version: 2,
    email: `anonymous-${ID}@anonymous.invalid`,
    passwordHash: '!anonymous',
    displayName: null,
    defaultProjectId: ID,
    emailVerified: false,
    referralCode: '000000000000',
    referredBy: null,
    referralMonths: 0,
    createdAt: 1,
  },
  {
    _id: `rp_${ID}_0`,
    version: 1,
    boardId: ID,
    seq: 0,
    capturedAt: 1,
    reason: 'batch',
    itemCount: 0,
    fingerprint: `sha256:${'0'.repeat(64)}`,
    parts: 1,
  },
  { _id: `rp_${ID}_0:0`, version: 1, pointId: `rp_${ID}_0`, boardId: ID, n: 0, text: '{"items":[]}', capturedAt: 1 },
  {
    _id: ID,
    version: 2,
    accountId: ID,
    agentId: ID,
    secretHash: '0'.repeat(64),
    prefix: 'agb_00000000',
    name: 'agent',
    scope: 'workspace',
    boardId: ID,
    role: 'member',
    resources: null,
    expiresAt: null,
    lastUsedAt: 1,
    revoked: false,
    createdAt: 1,
    issuedBy: null,
  },
  {
    _id: ID,
    version: 1,
    at: 1,
    actor: `user:${ID}`,
    action: 'token.issue',
    projectId: ID,
    data: {
      tokenId: ID,
      agentId: ID,
      name: 'agent',
      scope: 'workspace',
      role: 'member',
      prefix: 'agb_',
      requestId: ID,
      address: '127.0.0.1',
    },
    target: `token:${ID}`,
  },
  { _id: `2026-01-01:board:${ID}`, version: 1, day: '2026-01-01', scope: 'board', key: ID, counts: { commits: 1 } },
  {
    _id: `2026-01-01:account:${ID}`,
    version: 1,
    day: '2026-01-01',
    scope: 'account',
    key: ID,
    counts: { requests: 1 },
  },
  {
    _id: `2026-01-01:principal:${AGENT}`,
    version: 1,
    day: '2026-01-01',
    scope: 'principal',
    key: AGENT,
    counts: { requests: 1 },
  },
  {
    _id: ID,
    version: 4,
    nextWorkSeq: 7,
    nextFencingToken: 2,
    lastSeq: 10,
    nextDeadline: null,
    commitId: ID,
    outbox: [event(10, 'item.state', { from: 'claimed', to: 'done', item: done })],
    counts: COUNTS,
    entries: 6,
    stats: {
      days: {
        '2026-01-01': {
          done: 1,
          grants: 1,
          expiries: 0,
          verdicts: 0,
          passes: 0,
          readyToDone: { 0: 1 },
          counts: COUNTS,
          agentsPeak: 1,
        },
      },
      active: { [AGENT]: 1 },
    },
  },
  {
    v: 4,
    item: {
      title: 'item 0',
      description: '',
      type: 'task',
      priority: 0,
      parentId: null,
      dependsOn: [],
      verify: 'none',
      maxAttempts: 3,
      criteria: [],
      doctrine: [],
      spec: [],
      labels: [],
      workId: 'W-1',
      rank: null,
      state: 'done',
      life: {
        verify: 'none',
        attempts: 0,
        maxAttempts: 3,
        lease: null,
        submission: { head: 'abcdef1', by: AGENT, at: 1 },
        verifications: [],
        workHolders: [AGENT],
        finding: null,
        overridden: null,
        blockedReason: null,
      },
      progress: null,
      endedLeases: [],
      createdAt: 1,
      updatedAt: 1,
      version: 3,
      readyAt: 1,
    },
  },
  event(1, 'item.created', { title: 'item 0', state: 'ready', dependsOn: [], item: CREATED }),
  event(7, 'lease.granted', { lease: LEASE, item: claimed }),
  event(8, 'item.state', { from: 'ready', to: 'claimed', item: claimed }),
  event(9, 'item.submitted', { head: 'abcdef1', by: AGENT, item: done }),
  event(10, 'item.state', { from: 'claimed', to: 'done', item: done }),
];

/** The samples encoded by `encode` (the documents' own encoder), padded in front to whole words as lmdb-js reads a dictionary. */
export function builtDictionary(encode: (value: unknown) => Uint8Array): Buffer {
  const parts = SAMPLES.map((s) => Buffer.from(encode(s)));
  const length = parts.reduce((n, p) => n + p.length, 0);
  return Buffer.concat([Buffer.alloc((8 - (length % 8)) % 8), ...parts]);
}

/**
 * The dictionary this directory's values are compressed with: the one kept in `meta`, or, in a
 * directory that has none yet (new, or written uncompressed by an earlier version), `built`, kept
 * there now, before any value is compressed with it.
 */
export async function directoryDictionary(meta: Database, writer: Writer, built: () => Buffer): Promise<Buffer> {
  const kept = meta.get(KEY) as Uint8Array | undefined;
  if (kept) return Buffer.from(kept);
  const dictionary = built();
  await writer.write(() => meta.put(KEY, dictionary));
  return dictionary;
}
