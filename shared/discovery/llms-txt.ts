import { AGENT_PATHS } from '../agent-paths.js';
import type { DiscoveryCatalog } from '../contract.js';
import { EVM_METHOD } from '../payments/mpp/evm-charge.js';
import { DISCOVERY_PATHS } from './paths.js';
import { priceNote } from './route-prices.js';

type DiscoveredRoute = DiscoveryCatalog['routes'][number];

/**
 * The pay URL's `/llms.txt` (llmstxt.org; docs/decisions.md#D-218): a title, a one-line summary,
 * then, as prose (the format allows no headings there), how an agent pays for a call, buys a plan
 * and gets claimed by its human; then link lists: the priced routes with their prices and the pay
 * URL's own endpoints. Everything an agent needs to pay without reading hub's documentation.
 */
export function llmsTxt(catalog: DiscoveryCatalog, origin: string): string {
  const { seller, payment } = catalog;
  const lines = [
    `# ${oneLine(seller.name)}`,
    '',
    `> ${oneLine(seller.name)}'s API, paid per call at this pay URL (${origin}) with HTTP 402: x402 v2 or MPP. Prices are in USD per call; the 402 a call gets is what counts.`,
    '',
    ...howToPay(catalog),
    '',
    ...(catalog.salesEnabled ? [...howToBuy(), ''] : []),
    ...howToBeClaimed(),
    '',
    '## Priced routes',
    '',
    ...(catalog.routes.length ? catalog.routes.map((entry) => routeLine(catalog, entry, origin)) : ['- (none declared yet)']),
    '',
    '## Pay URL endpoints',
    '',
    `- [OpenAPI](${origin}${DISCOVERY_PATHS.openapi}): the priced routes, with x-payment-info (price, scheme, network, asset) per operation`,
    `- [Register an agent](${origin}${AGENT_PATHS.challenge}): POST {"walletAddress"}, sign the message (EIP-191), then POST ${AGENT_PATHS.register}`,
    `- [Claim by a human](${origin}${AGENT_PATHS.claim}): POST {"email"} with the agent's bearer token`,
    `- [Plans](${origin}/manifest.json): every plan with its prices and id (agent token needed)`,
    `- [Buy or top up](${origin}${AGENT_PATHS.extend}): POST {"planId", "amountUsd"?}, answered 402, then paid like a call`,
    `- [Purchases](${origin}${AGENT_PATHS.receipt}): what the agent and its human hold here`,
    '',
  ];
  if (!payment) lines.splice(5, 0, 'This pay URL takes no payments right now: calls that need one are refused until it does.', '');
  return lines.join('\n');
}

function howToPay({ payment }: DiscoveryCatalog): string[] {
  const where = payment ? ` (token ${payment.asset} on ${payment.network}, paid to ${payment.payTo})` : '';
  return [
    `**Paying for a call.** Call a route below as you would any API. Unpaid, it answers \`402 Payment Required\` with the price in its body and the challenge in two headers; answer either with a wallet holding the token${where}:`,
    '',
    '1. x402 v2: `payment-required` is base64 JSON with `accepts` (scheme `exact`, EIP-3009 `transferWithAuthorization`). Sign the accepted requirements and send the same request again, byte for byte, with the base64 payload in `payment-signature`. Any x402 client does this (for example `@x402/fetch`).',
    `2. MPP: \`www-authenticate: Payment …\` (method \`${EVM_METHOD}\`, intent \`charge\`). Send the same request again with \`Authorization: Payment <credential>\` (an mppx client does this).`,
    "3. The answer is the seller's, with `hub-billing` (what was charged) and `payment-response` (x402) or `payment-receipt` (MPP). A paid request is forwarded once; pay again for the next call.",
  ];
}

function howToBuy(): string[] {
  return [
    `**Buying a plan.** Credit, subscriptions and trials are bought with an agent token (see Register): read the plans at \`/manifest.json\`, then \`POST ${AGENT_PATHS.extend}\` with \`{"planId":"pln_…"}\` (and \`"amountUsd":"5.00"\` for credit). The answer is a 402, paid as a call is; the paid retry opens the account. Calls with the token then draw on it, \`${AGENT_PATHS.receipt}\` lists it, and \`${AGENT_PATHS.extend}?accessId=…\` renews or tops it up.`,
  ];
}

function howToBeClaimed(): string[] {
  return [
    `**Being claimed by your human.** Free included units and a buyer's purchases belong to a person with a verified email: \`POST ${AGENT_PATHS.claim}\` with the agent token and \`{"email":"…"}\`; hub mails that person a link, and the claim holds once they press Confirm. Then send \`hub-mode: free\` to use included units.`,
  ];
}

function routeLine(catalog: DiscoveryCatalog, entry: DiscoveredRoute, origin: string): string {
  const { route, price } = entry;
  const example = route.example;
  const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(example?.pathParams?.[name] ?? `{${name}}`));
  const query = example?.query ? `?${new URLSearchParams(example.query)}` : '';
  const note = priceNote(catalog, entry);
  const cost = price ? `${price.amountUsd} USD a call${note ? ` (${oneLine(note)})` : ''}` : 'not priced per call';
  const body = example?.body ? `; example body ${JSON.stringify(example.body)}` : '';
  return `- [${route.method} ${route.path}](${origin}${path}${query}): ${route.description ? `${oneLine(route.description)}. ` : ''}${cost}${body}`;
}

/** Names, descriptions and price notes are the seller's text: one line each, so none can start a section of its own. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
