// Board events and audit actions as a person reads them: "Lease revoked", "Operator: revoked
// credentials". The raw name (`lease.revoked`, `admin.revoke`) is what agents, the docs and the
// audit filter use: every place that shows these words keeps it at hand (a title, small code).

const WORDS: Record<string, string> = {
  // The board's events (its Activity, an item's history).
  'item.created': 'Created',
  'item.state': 'Moved',
  'item.submitted': 'Submitted',
  'item.verified': 'Verified',
  'item.updated': 'Edited',
  'item.progress': 'Progress noted',
  'item.comment': 'Commented',
  'item.superseded': 'Superseded',
  'item.overridden': 'Overridden by hand',
  'items.reordered': 'Order changed',
  'lease.granted': 'Claimed',
  'lease.renewed': 'Lease renewed',
  'lease.released': 'Lease released',
  'lease.expired': 'Lease expired',
  'lease.revoked': 'Lease revoked',
  'board.paused': 'Board paused',
  'board.resumed': 'Board resumed',
  'board.rewound': 'Board rewound',
  'board.imported': 'Board imported',
  'doctrine.proposed': 'Doctrine proposed',
  'doctrine.agreed': 'Doctrine agreed',
  'doctrine.ratified': 'Doctrine ratified',
  'doctrine.rejected': 'Doctrine rejected',
  'doctrine.level': 'Doctrine level set',
  'doctrine.blind_test': 'Blind test',
  'spec.created': 'Spec clause added',
  'spec.updated': 'Spec clause edited',
  // The audit log's actions (people's, the provider's, the operators' `admin.*` and `live.*`).
  'account.delete': 'Account deleted',
  'board.create': 'Board created',
  'board.delete': 'Board deleted',
  'board.claimed': 'Board claimed',
  'board.rewind': 'Board rewound',
  'token.issue': 'Token issued',
  'token.revoke': 'Token revoked',
  'token.reissue': 'Token reissued',
  'member.role': 'Member’s role changed',
  'member.remove': 'Member removed',
  'invitation.create': 'Invitation made',
  'invitation.accept': 'Invitation accepted',
  'invitation.revoke': 'Invitation withdrawn',
  'transfer.offer': 'Board offered to another account',
  'transfer.accept': 'Board transfer accepted',
  'item.override': 'Item overridden by hand',
  'item.gate.lower': 'Verify gate taken off an item',
  'enrollment.mint': 'Enrollment code made',
  'enrollment.revoke': 'Enrollment code revoked',
  'billing.webhook': 'Payment provider event',
  'billing.subscription.cancel': 'Subscription of a deleted board cancelled',
  'feedback.promote': 'Feedback made an item',
  'feedback.resolve': 'Feedback resolved',
  'feedback.dismiss': 'Feedback dismissed',
  'admin.revoke': 'Operator: credentials revoked',
  'admin.impersonate': 'Operator: acted as the account',
  'admin.impersonation.end': 'Operator: stopped acting as the account',
  'admin.user.view': 'Operator: viewed an account',
  'admin.tokens.view': 'Operator: viewed tokens',
  'admin.token.revoke': 'Operator: token revoked',
  'admin.allowlist.add': 'Operator: allowlist entry added',
  'admin.allowlist.remove': 'Operator: allowlist entry removed',
  'admin.plan': 'Operator: plan changed',
  'admin.refund': 'Operator: refund',
  'admin.subscription': 'Operator: subscription changed',
  'admin.webhook.replay': 'Operator: provider event replayed',
  'admin.export': 'Operator: board exported',
  'admin.import': 'Operator: board imported',
  'admin.delete': 'Operator: account deleted',
  'admin.restore': 'Operator: account restored',
  'admin.purge': 'Operator: account purged',
  'admin.contact': 'Operator: contacted the account',
  'admin.feedback.promote': 'Operator: feedback made an item',
  'live.firehose': 'Operator: watched the firehose',
  'live.subscribe': 'Operator: watched a board',
  'device.approved': 'Agent sign-in approved',
  'device.denied': 'Agent sign-in denied',
};

/** Whether `name` has its own words (a name with none reads as its parts). */
export const hasWords = (name: string): boolean => Object.hasOwn(WORDS, name);

/** `lease.revoked` → "Lease revoked"; a name with no entry, its parts as words ("foo.bar_baz" → "Foo bar baz"). */
export function eventWords(name: string): string {
  const known = WORDS[name];
  if (known) return known;
  const plain = name.replace(/[._]+/g, ' ').trim();
  return plain.charAt(0).toUpperCase() + plain.slice(1);
}
