// x402's own facilitator (their packages, unmodified) as an HTTP server, settling on the bench's
// chain from its own settler account: the reference hub's paid calls are measured against. It
// takes `exact` and `batch-settlement` (the settler's key also signs claim batches as the channels'
// receiver authorizer, which `/supported` advertises).
//
// On the dev chain the batch-settlement contract at x402's address is hub's (x402's packages do not
// ship their contract's bytecode; docs/decisions.md#D-282), and the chain has no Multicall3. x402's
// facilitator reads a channel with one Multicall3 `tryAggregate` of `channels`, `pendingWithdrawals`
// and `refundNonce`: its signer answers that read with one call each, and the two views hub's
// contract does not have (no timed withdrawal, no refunds yet) as the contract would answer for a
// channel with neither: zero. Everything else goes to the chain as x402 sends it.
//
//   node --import tsx bench/servers/x402-facilitator.ts <port> <chain file> <settler account index>
import type { FacilitatorEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import express from 'express';
import { type Address, encodeAbiParameters, type Hex, toFunctionSelector } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readDeploymentFile } from '../../chain/deployment.js';
import { BATCH_SETTLEMENT_CONTRACT } from '../../shared/payments/batch-settlement.js';
import { x402FacilitatorSigner, x402ReferenceFacilitator } from '../../test/helpers/facilitator-server.js';

const [port, chainFile, settlerIndex] = process.argv.slice(2);
const chain = await readDeploymentFile(chainFile!);
const settler = chain.accounts[Number(settlerIndex)]!;
const signer = x402FacilitatorSigner(chain, settler);
const facilitator = x402ReferenceFacilitator(chain, settler, signer).register(
  chain.network,
  new BatchSettlementEvmScheme(withSingleReads(signer), privateKeyToAccount(settler.privateKey)),
);

const app = express();
app.use(express.json());
app.post('/verify', async (req, res) => {
  res.json(await facilitator.verify(req.body.paymentPayload, req.body.paymentRequirements));
});
app.post('/settle', async (req, res) => {
  res.json(await facilitator.settle(req.body.paymentPayload, req.body.paymentRequirements));
});
app.get('/supported', (_req, res) => {
  res.json(facilitator.getSupported());
});
app.get('/', (_req, res) => {
  res.json({ ok: true });
});
app.listen(Number(port), '127.0.0.1');

/** The views x402's facilitator reads that hub's contract lacks, and what they are for a channel with no withdrawal and no refund. */
const absentViews = new Map<string, Hex>([
  [toFunctionSelector('pendingWithdrawals(bytes32)'), encodeAbiParameters([{ type: 'uint128' }, { type: 'uint40' }], [0n, 0])],
  [toFunctionSelector('refundNonce(bytes32)'), encodeAbiParameters([{ type: 'uint256' }], [0n])],
]);

/** `signer`, its Multicall3 reads made one call at a time. */
function withSingleReads(signer: FacilitatorEvmSigner): FacilitatorEvmSigner {
  const call = (signer as unknown as { call: (args: { to: Address; data: Hex }) => Promise<{ data?: Hex }> }).call;
  const readContract: FacilitatorEvmSigner['readContract'] = async (args) => {
    if (args.functionName !== 'tryAggregate') return signer.readContract(args);
    const [, calls] = args.args as [boolean, { target: Address; callData: Hex }[]];
    return Promise.all(
      calls.map(async ({ target, callData }) => {
        try {
          const { data } = await call({ to: target, data: callData });
          return { success: true, returnData: data ?? '0x' };
        } catch {
          const standIn = target.toLowerCase() === BATCH_SETTLEMENT_CONTRACT.toLowerCase() && absentViews.get(callData.slice(0, 10));
          if (standIn) return { success: true, returnData: standIn };
          return { success: false, returnData: '0x' as Hex };
        }
      }),
    );
  };
  return { ...signer, readContract };
}
