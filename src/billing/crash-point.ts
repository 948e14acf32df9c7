// A test hook, and nothing else: with BOARD_TEST_CRASH_AT=<step> (only the crash tests,
// test/e2e/billing-crash*.ts, set it on a child process) this process is killed with SIGKILL
// when the webhook reaches that step, so those tests prove each step safe to die after.
const CRASH_AT = process.env.BOARD_TEST_CRASH_AT;

/** The webhook's steps a crash test can stop the process after. */
export type CrashStep = 'webhook:after-pending' | 'webhook:after-apply' | 'webhook:after-settle' | 'webhook:after-log';

export function crashPoint(step: CrashStep): void {
  if (CRASH_AT === step) process.kill(process.pid, 'SIGKILL');
}
