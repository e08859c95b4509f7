// x402's own facilitator (their packages, unmodified) as an HTTP server, settling on the bench's
// chain from its own settler account: the reference hub's paid calls are measured against.
//
//   node --import tsx bench/servers/x402-facilitator.ts <port> <chain file> <settler account index>
import express from 'express';
import { readDeploymentFile } from '../../chain/deployment.js';
import { x402ReferenceFacilitator } from '../../test/helpers/facilitator-server.js';

const [port, chainFile, settlerIndex] = process.argv.slice(2);
const chain = await readDeploymentFile(chainFile!);
const facilitator = x402ReferenceFacilitator(chain, chain.accounts[Number(settlerIndex)]!);

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
