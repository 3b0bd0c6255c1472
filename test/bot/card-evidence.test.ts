import { describe, expect, it } from 'vitest';
import type { VaultEntry } from '../../src/api/schemas.js';
import { DEFAULT_EVIDENCE_OPTIONS, judgeCard } from '../../src/bot/doubt/evidence.js';
import type { Intent } from '../../src/store/ledger.js';

const SENT = 1_000_000;
const intent = (over: Partial<Intent> = {}): Intent =>
  ({
    key: 'card-key-1',
    operation: 'card',
    body: { card_id: 'c1', max_price: 20 },
    createdAt: SENT,
    updatedAt: SENT,
    firstSentAt: SENT,
    lastSentAt: SENT,
    lastAnswerAt: SENT + 100,
    keyForgotten: false,
    parkedAt: null,
    ...over,
  }) as Intent;
const inVault = { card_id: 'c1', pull_id: 'tx-1' } as VaultEntry;
const o = DEFAULT_EVIDENCE_OPTIONS;
const settled = SENT + o.settleMs;

describe('judgeCard (a card purchase in doubt)', () => {
  it.each([
    ['card absent, order may still run', intent(), undefined, SENT + 10, true, 'wait'],
    ['card absent once the order ended', intent(), undefined, settled, true, 'not_charged'],
    ['card absent, key forgotten', intent({ keyForgotten: true }), undefined, settled, true, 'not_charged'],
    ['card there, key remembered: replay for the price', intent(), inVault, SENT + 10, true, 'resend'],
    // The card is ours: a re-send cannot buy it again, so it goes out even while opening is paused.
    ['card there, opening paused: still a replay for the price', intent(), inVault, settled, false, 'resend'],
    ['card absent, opening paused', intent(), undefined, settled, false, 'not_charged'],
    ['card there, key forgotten', intent({ keyForgotten: true }), inVault, settled, true, 'charged'],
    [
      'card there, past the re-send horizon',
      intent(),
      inVault,
      SENT + o.resendHorizonMs + 1,
      true,
      'charged',
    ],
  ] as const)('%s → %s', (_name, i, found, now, mayResend, kind) => {
    expect(judgeCard(i, found, now, o, mayResend).kind).toBe(kind);
  });
});
