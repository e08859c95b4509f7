import t from 'tap';
import { type Hex, parseTransaction } from 'viem';
import { settlerAccount } from '../../../control-plane/facilitator/settler-account.js';
import { SettlerState } from '../../../control-plane/facilitator/settler-state.js';
import {
  broadcastTransfer,
  confirmTransfer,
  type SettlerClients,
  type TransferCall,
} from '../../../control-plane/facilitator/transfer-sender.js';
import { turns } from '../../../runtime/turns.js';

// Settlements running at once each take a nonce, and their transactions must reach the node in
// that order: a node that mines on arrival can leave a transaction that overtook its predecessor
// unmined. A node that answers after a random delay shows whether any send overtakes another.

const account = settlerAccount(`0x${'4c'.repeat(32)}` as Hex);
const call: TransferCall = {
  token: '0x00000000000000000000000000000000000000aa',
  authorization: {
    from: '0x00000000000000000000000000000000000000bb',
    to: '0x00000000000000000000000000000000000000cc',
    value: 10_000n,
    validAfter: 0n,
    validBefore: 2n ** 40n,
    nonce: `0x${'01'.repeat(32)}`,
  },
  signature: { compact: new Uint8Array(64), recoveryId: 0, v: 27, r: `0x${'02'.repeat(32)}`, s: `0x${'03'.repeat(32)}` },
};

function slowNode(firstNonce: number) {
  const arrived: number[] = [];
  let sending = 0;
  let mostAtOnce = 0;
  const reader = {
    getTransactionCount: async () => firstNonce,
    estimateFeesPerGas: async () => ({ maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000n }),
    sendRawTransaction: async ({ serializedTransaction }: { serializedTransaction: Hex }) => {
      sending++;
      mostAtOnce = Math.max(mostAtOnce, sending);
      arrived.push(parseTransaction(serializedTransaction).nonce!);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
      sending--;
      return '0x';
    },
  };
  return { reader, arrived, mostAtOnce: () => mostAtOnce };
}

t.test('transactions sent at once reach the node one at a time, in nonce order', async (t) => {
  const node = slowNode(5);
  const clients = {
    reader: node.reader,
    wallet: { account, chain: { id: 31337 } },
    state: new SettlerState(node.reader as never, account, { inOrder: true }),
  } as unknown as SettlerClients;

  const broadcasts = await Promise.all(Array.from({ length: 30 }, () => broadcastTransfer(clients, call, 100_000n)));
  t.ok(
    broadcasts.every((b) => b.status === 'sent'),
    'every one sent',
  );
  t.same(
    node.arrived,
    Array.from({ length: 30 }, (_, i) => 5 + i),
    'nonces 5..34, in order',
  );
  t.equal(node.mostAtOnce(), 1, 'a send waits for the one before it to be answered');
});

t.test('without inOrder (a node that orders by nonce itself), sends run side by side', async (t) => {
  const node = slowNode(0);
  const clients = {
    reader: node.reader,
    wallet: { account, chain: { id: 31337 } },
    state: new SettlerState(node.reader as never, account),
  } as unknown as SettlerClients;
  await Promise.all(Array.from({ length: 10 }, () => broadcastTransfer(clients, call, 100_000n)));
  t.ok(node.mostAtOnce() > 1, 'more than one send in flight at a time');
});

t.test('a turn that fails does not stop the turns after it', async (t) => {
  const inTurn = turns();
  const order: string[] = [];
  const first = inTurn(async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    order.push('first');
    throw new Error('the node went away');
  });
  const second = inTurn(async () => {
    order.push('second');
    return 'sent';
  });
  await t.rejects(first, /went away/);
  t.equal(await second, 'sent');
  t.same(order, ['first', 'second']);
});

t.test('a turn waits for a stalled one at most maxWaitMs', async (t) => {
  const inTurn = turns({ maxWaitMs: 30 });
  let release: () => void = () => {};
  const stalled = inTurn(() => new Promise<string>((resolve) => (release = () => resolve('late'))));
  const started = Date.now();
  t.equal(await inTurn(async () => 'next'), 'next', 'the next turn runs without the stalled one');
  t.ok(Date.now() - started >= 25, 'after waiting for it a while');
  release();
  t.equal(await stalled, 'late');
  t.equal(await inTurn(async () => 'after'), 'after');
});

t.test('a receipt is looked for by hash until it is there, or until the deadline', async (t) => {
  const hash = `0x${'0a'.repeat(32)}` as Hex;
  let looks = 0;
  const minedOnThirdLook = {
    pollingInterval: 5,
    getTransactionReceipt: async () => {
      if (++looks < 3) throw new Error('Transaction receipt could not be found');
      return { transactionHash: hash, status: 'success' };
    },
  };
  const mined = await confirmTransfer({ reader: minedOnThirdLook } as unknown as SettlerClients, hash, 1_000);
  t.equal(mined.status, 'mined');
  t.equal(looks, 3, 'no new block needed: the hash is looked up again');

  const never = { pollingInterval: 0, getTransactionReceipt: async () => Promise.reject(new Error('not found')) };
  const started = Date.now();
  const lapsed = await confirmTransfer({ reader: never } as unknown as SettlerClients, hash, 50);
  t.match(lapsed, { status: 'unconfirmed', message: /not mined within 50 ms: not found/ });
  t.ok(Date.now() - started >= 50, 'a polling interval of 0 still waits out the deadline');
});
