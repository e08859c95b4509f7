/** What one call on a session's channel was answered: its status, what its receipt charged, and a 402's refusal code. */
export type SessionAnswer = { status: number; charged: bigint; refusal?: string };

const fromB64 = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));

/**
 * Calls paid on one channel, `perRound` at once, `rounds` times, through the pay URLs in turn (two
 * proxies, say): each answer as the payer's client got it. The client's channel state is shared by
 * every call, so calls at once race for the channel.
 */
export async function callsAtOnce(
  pay: typeof fetch,
  urls: readonly ((path: string) => string)[],
  { rounds, perRound }: { rounds: number; perRound: number },
): Promise<SessionAnswer[]> {
  const answers: SessionAnswer[] = [];
  for (let round = 0; round < rounds; round++) {
    answers.push(
      ...(await Promise.all(
        Array.from({ length: perRound }, async (_, i) => {
          const res = await pay(urls[i % urls.length]!(`/search?q=r${round}-${i}`));
          const receipt = res.status === 200 ? fromB64(res.headers.get('payment-response')) : undefined;
          const refusal = res.status === 402 ? (fromB64(res.headers.get('payment-required')).error as string) : undefined;
          await res.arrayBuffer();
          return { status: res.status, charged: receipt ? BigInt(receipt.extra.chargedAmount) : 0n, ...(refusal ? { refusal } : {}) };
        }),
      )),
    );
  }
  return answers;
}

/** How a call that lost the race for its channel may be refused: busy, or the corrective 402. */
export const LOST_CHANNEL_REFUSALS = [
  'invalid_batch_settlement_evm_channel_busy',
  'invalid_batch_settlement_evm_cumulative_amount_mismatch',
];
