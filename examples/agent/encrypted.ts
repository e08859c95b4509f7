// A demo agent's end-to-end encrypted call: the body is encrypted to the key the seller publishes
// at its pay URL, the 402 is paid with the official x402 client (unmodified: its paid retry resends
// the same encrypted body), and the reply is decrypted with the agent's reply key.
//
//   node --import tsx examples/agent/encrypted.ts http://weather.pay.localhost:8402/metered '{"city":"Lisbon"}'
//
// The wallet is as for pay.ts: AGENT_PRIVATE_KEY, or a funded account of the local chain.
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { setGlobalDispatcher } from 'undici';
import { privateKeyToAccount } from 'viem/accounts';
import { localhostDispatcher } from '../../runtime/localhost-dispatcher.js';
import { createReplyKey, decryptReply, encryptRequest, fetchJwks, JOSE_MEDIA_TYPE } from '../../sdk/encryption.js';
import { walletKey } from './wallet.js';

const [target, body = '{}'] = process.argv.slice(2);
if (!target) {
  console.error("usage: node --import tsx examples/agent/encrypted.ts <pay URL> ['<JSON body>']");
  process.exit(2);
}
const wallet = privateKeyToAccount(await walletKey());
if (new URL(target).hostname.endsWith('.localhost')) setGlobalDispatcher(localhostDispatcher());

const fail = (err: Error): never => {
  console.error(`could not call ${target}: ${err.message}`);
  process.exit(1);
};
const replyKey = await createReplyKey();
const jwks = await fetchJwks(target).catch(fail);
const sealed = await encryptRequest(jwks, body, { replyKey, contentType: 'application/json' }).catch(fail);

const client = new x402Client();
registerExactEvmScheme(client, { signer: wallet });
client.setSpendControls({ allowedAssets: true });
const res = await wrapFetchWithPayment(fetch, client)(target, {
  method: 'POST',
  headers: { 'content-type': JOSE_MEDIA_TYPE },
  body: sealed,
}).catch(fail);

console.log(`${res.status} ${res.statusText}  (sent ${sealed.length} bytes of JWE to key ${jwks.keys[0]?.kid})`);
const billing = res.headers.get('hub-billing');
if (billing) console.log(`hub-billing: ${billing}`);
const text = await res.text();
if (res.headers.get('content-type') !== JOSE_MEDIA_TYPE) {
  console.log(text); // hub's own answer (an error, a challenge), never encrypted
} else {
  const reply = await decryptReply(text, replyKey);
  console.log(`decrypted (${reply.contentType}): ${new TextDecoder().decode(reply.plaintext)}`);
}
