// Board sharing over real HTTP and WebSocket (DOMAIN.md "Sharing"), run on each store adapter:
// invitations (sharing-invitations.ts), the mail budget they share with transfer offers
// (sharing-mail.ts), members and roles (sharing-members.ts) and ownership transfers
// (sharing-transfers.ts), all against one server on the store under test.
import { describe } from 'vitest';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { invitationCases } from './sharing-invitations.js';
import { SHARING_ENV, sharingKit } from './sharing-kit.js';
import { mailBudgetCases } from './sharing-mail.js';
import { memberCases } from './sharing-members.js';
import { transferCases } from './sharing-transfers.js';

export function sharingFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`sharing on the ${name} store`, () => {
    const kit = sharingKit(serveStore(open, SHARING_ENV));
    describe('invitations', () => invitationCases(kit));
    describe('the mail budget', () => mailBudgetCases(kit));
    describe('members', () => memberCases(kit));
    describe('transfers', () => transferCases(kit));
  });
}
