import type { ClaimView } from '../../shared/contract.js';

/**
 * The pages a claim mail's links open: a human's first sight of hub, so plain HTML that works
 * without script, says what the agent is, and asks for one button press. Every value is escaped.
 */

export type ClaimLink = 'confirm' | 'release';

const STATUS: Record<ClaimView['state'], number> = {
  open: 200,
  confirmed: 200,
  released: 200,
  expired: 410,
  used: 410,
  taken: 409,
  unknown: 404,
};

export function claimPage(link: ClaimLink, view: ClaimView, action: string, done: boolean): { status: number; html: string } {
  const { title, body } = content(link, view, action, done);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · hub</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; color: #1b1b1b; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dt { color: #555; } dd { margin: 0; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
button { font: inherit; padding: .5rem 1.25rem; border-radius: .375rem; border: 1px solid #1b1b1b; background: #1b1b1b; color: #fff; cursor: pointer; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
  return { status: done && (view.state === 'confirmed' || view.state === 'released') ? 200 : STATUS[view.state], html };
}

function content(link: ClaimLink, view: ClaimView, action: string, done: boolean): { title: string; body: string } {
  const facts = view.agentId
    ? `<dl>
<dt>Agent</dt><dd>${escapeHtml(view.agentId)}</dd>
<dt>Wallet</dt><dd>${escapeHtml(view.walletAddress ?? '')}</dd>
${view.sellerName ? `<dt>Asked at</dt><dd>${escapeHtml(view.sellerName)}</dd>\n` : ''}<dt>Your email</dt><dd>${escapeHtml(view.email ?? '')}</dd>
</dl>`
    : '';
  const button = (label: string) =>
    `<form method="post" action="${escapeHtml(action)}"><button type="submit">${escapeHtml(label)}</button></form>`;

  switch (view.state) {
    case 'open':
      return {
        title: 'Is this agent yours?',
        body: `<p>This AI agent asked to be linked to your email address. Confirm only if it works for you:
what you buy through it becomes yours, and it can use your free allowances.</p>
${facts}
${button('Confirm')}
<p>Not yours? Close this page: nothing happens unless you confirm.</p>`,
      };
    case 'confirmed':
      return link === 'confirm' || done
        ? {
            title: 'The agent is yours',
            body: `<p>Done: this agent now works for you. The mail you received also holds a link to release it later.</p>\n${facts}`,
          }
        : {
            title: 'Release this agent?',
            body: `<p>This agent works for you. Releasing it takes away at once what is yours (purchases, free
allowances); they stay yours for your other agents.</p>
${facts}
${button('Release')}`,
          };
    case 'released':
      return { title: 'The agent is released', body: `<p>This agent no longer works for you.</p>\n${facts}` };
    case 'expired':
      return {
        title: 'This link has expired',
        body: '<p>Confirmation links work for 24 hours. Ask the agent to request a new one.</p>',
      };
    case 'used':
      return { title: 'This link was already used', body: '<p>Each confirmation link works once. Nothing more to do here.</p>' };
    case 'taken':
      return {
        title: 'Someone else owns this agent',
        body: '<p>Another person confirmed this agent first. They must release it before it can be yours.</p>',
      };
    default:
      return { title: 'Unknown link', body: '<p>This link is not one hub sent, or it was mistyped. Check the mail you received.</p>' };
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
