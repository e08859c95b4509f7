import { upstreamAddressesOf } from '../../runtime/upstream-addresses.js';
import { contract, type ParsedInput, type ProcedureName, type ProcedureOutput } from '../../shared/contract.js';
import { contractOutputsChecked, enforceOutput } from '../../shared/contract-outputs.js';
import { payPurchaseByCard } from '../card-payments/card-purchase.js';
import { confirmClaim, releaseClaim, viewClaim } from '../claims/claim-links.js';
import { requestAgentClaim } from '../claims/request-claim.js';
import type { RequestContext } from '../context.js';
import { databaseIsReachable } from '../db/client.js';
import { redeemKey } from '../delivery/key-mint.js';
import { discoveryCatalog } from '../discovery/catalog.js';
import { issuePaymentChallenge } from '../payments/challenge.js';
import { claimPaidRequest } from '../payments/claim.js';
import { railsReadiness } from '../payments/readiness.js';
import { settlePaidRequest } from '../payments/settlement/paid-call.js';
import { planStanding } from '../storefront/plan-standing.js';
import { completePurchase, purchaseReceipt, startPurchase } from '../storefront/purchase.js';
import { internalProcedure, router } from '../trpc/init.js';
import { agentByTokenHash, agentsChangedSince, completeRegistration, createRegistrationChallenge } from './agents.js';
import { captureUsage, captureUsageError } from './captured-usage.js';
import { recordRequests } from './request-records.js';
import { sellerByHost, sellerManifest, sellersChangedSince } from './sellers.js';

type Implementation<Name extends ProcedureName> = (ctx: RequestContext, input: ParsedInput<Name>) => Promise<ProcedureOutput<Name>>;

/** The control-plane's side of the contract (shared/contract.ts): one implementation a procedure. */
const implementations: { [Name in ProcedureName]: Implementation<Name> } = {
  ping: async (ctx) => ({ ok: true, database: await databaseIsReachable(ctx.db), ...(await railsReadiness(ctx.rails)) }),
  sellerByHost: (ctx, input) => sellerByHost(ctx.db, ctx.masterKey, ctx.config.payDomain, input.host),
  sellersChangedSince: (ctx, input) => sellersChangedSince(ctx.db, input.since),
  manifest: (ctx, input) => sellerManifest(ctx.db, input.sellerId),
  discoveryCatalog: (ctx, input) => discoveryCatalog(ctx.db, ctx.rails, input.sellerId),
  agentByTokenHash: (ctx, input) => agentByTokenHash(ctx.db, input.tokenHash),
  agentChallenge: (ctx, input) => createRegistrationChallenge(ctx.db, input),
  agentRegister: (ctx, input) => completeRegistration(ctx.db, input),
  agentsChangedSince: (ctx, input) => agentsChangedSince(ctx.db, input.since),
  requestAgentClaim: (ctx, input) => requestAgentClaim(ctx, input),
  viewClaim: (ctx, input) => viewClaim(ctx.db, input),
  confirmClaim: (ctx, input) => confirmClaim(ctx.db, input.tokenHash).finally(() => ctx.accountWrites?.wake()),
  releaseClaim: (ctx, input) => releaseClaim(ctx.db, input.tokenHash),
  startPurchase: (ctx, input) => startPurchase(ctx.db, ctx.rails, input, ctx.config.cardPayments).finally(() => ctx.accountWrites?.wake()),
  completePurchase: (ctx, input) => completePurchase(ctx.db, ctx.rails, input).finally(() => ctx.accountWrites?.wake()),
  payPurchaseByCard: (ctx, input) => payPurchaseByCard(ctx, input).finally(() => ctx.accountWrites?.wake()),
  purchaseReceipt: (ctx, input) => purchaseReceipt(ctx.db, input),
  redeemKey: (ctx, input) => redeemKey(ctx.db, ctx.masterKey, input, upstreamAddressesOf(ctx.config)),
  recordRequests: (ctx, input) => recordRequests(ctx.db, input),
  captureUsage: (ctx, input) => captureUsage(ctx.db, input),
  issuePaymentChallenge: (ctx, input) => issuePaymentChallenge(ctx.db, ctx.rails, input, planStanding),
  claimPaidRequest: (ctx, input) => claimPaidRequest(ctx.db, ctx.rails, input, { strandedCallMs: ctx.config.pending?.strandedCallMs }),
  settlePaidRequest: async (ctx, input) => {
    const usageError = input.usage && (await captureUsageError(ctx.db, ctx.logger, input.usage));
    const outcome = await settlePaidRequest(ctx.db, ctx.rails, input);
    return usageError ? { ...outcome, usageError } : outcome;
  },
};

/**
 * In tests each answer is checked against its output schema before it leaves, in whichever lane
 * (shared/contract-outputs.ts). Not with tRPC's `.output()`, which answers the schema's parsed copy
 * (its keys in the schema's order) instead of what the procedure returned.
 */
const checkOutputs = contractOutputsChecked();

function serve<Name extends ProcedureName>(name: Name) {
  const { kind, input } = contract[name];
  const implementation = implementations[name] as Implementation<ProcedureName>;
  const procedure = internalProcedure.input(input);
  const resolve = checkOutputs
    ? async ({ ctx, input }: { ctx: RequestContext; input: unknown }) => {
        const answer = await implementation(ctx, input as never);
        enforceOutput(name, answer, 'control-plane');
        return answer;
      }
    : ({ ctx, input }: { ctx: RequestContext; input: unknown }) => implementation(ctx, input as never);
  return kind === 'query' ? procedure.query(resolve) : procedure.mutation(resolve);
}

/** The API the proxy calls over tRPC. Every procedure needs the internal token. */
const internalRouter = router(
  Object.fromEntries((Object.keys(contract) as ProcedureName[]).map((name) => [name, serve(name)])) as Record<
    ProcedureName,
    ReturnType<typeof serve>
  >,
);

/**
 * What /trpc serves: the internal API, under the `internal.` prefix the proxy calls
 * (`/trpc/internal.<procedure>`), and nothing of the management API.
 */
export const internalApiRouter = router({ internal: internalRouter });
