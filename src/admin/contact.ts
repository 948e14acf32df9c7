// Contacting an account (DOMAIN.md "Operators"): an operator's message mailed to the account's
// address through the mailer (the outbox, so it survives this node), kept in the audit with its
// subject and text. The subject is one header line: no control characters (CR and LF above all)
// nor Unicode line separators, so nothing can be added to the message's headers; the text may
// hold line breaks and tabs only. Both are bounded.
import { z } from 'zod';
import type { Store } from '../../store/ports/store.js';
import { AppError } from '../errors/app-error.js';
import type { Mailer } from '../mail/mailer.js';
import { auditOperatorAction, type OperatorCtx } from './audit.js';

export const SUBJECT_MAX = 200;
export const TEXT_MAX = 10_000;

export const ContactSubject = z
  .string()
  .trim()
  .min(1)
  .max(SUBJECT_MAX)
  // Checks rather than patterns: the OpenAPI document carries a pattern, and its \p{Cc} is one
  // that generators of test input (Schemathesis) cannot build values for.
  .refine((t) => !/[\p{Cc}\u2028\u2029]/u.test(t), 'must be one line without control characters');
export const ContactText = z
  .string()
  .min(1)
  .max(TEXT_MAX)
  .refine((t) => !/[^\P{Cc}\r\n\t]/u.test(t), 'may hold line breaks and tabs, no other control characters')
  .refine((t) => t.trim().length > 0, 'must say something');

type Ctx = OperatorCtx;

export class Contact {
  constructor(
    private readonly store: Pick<Store, 'accounts' | 'audit'>,
    private readonly mailer: Mailer,
    private readonly publicUrl: string,
  ) {}

  /** Mails the account; the audit row is written first (an action without its row has failed). */
  async send(ctx: Ctx, userId: string, subject: string, text: string): Promise<{ accountId: string; to: string }> {
    const account = await this.store.accounts.get(userId);
    if (!account) throw new AppError('NOT_FOUND', 'No account has that id.');
    await auditOperatorAction(this.store, ctx, {
      action: 'contact',
      target: `account:${account._id}`,
      data: { subject, text },
    });
    await this.mailer.send({
      to: account.email,
      subject,
      text: `${text}\n\n-- \nThe operators of ${this.publicUrl}\n`,
    });
    return { accountId: account._id, to: account.email };
  }
}
