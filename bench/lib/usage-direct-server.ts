// The benchmark's control-plane with the direct usage binding (control-plane/rest/hot-routes.ts)
// mounted in front, as the server would mount it: the usage routes answered by the binding,
// everything else handed to the control-plane. Configured from the environment like
// `hub start control-plane`; listens on the port given as the first argument.
import { createServer } from 'node:http';
import { startControlPlane } from '../../control-plane/main.js';
import { createHotRoutes } from '../../control-plane/rest/hot-routes.js';
import { sendError } from '../../runtime/respond.js';
import { freePort } from './processes.js';

const port = Number(process.argv[2]);
// The control-plane's own port is only a formality here: every request comes in through the front.
const cp = await startControlPlane({ ...process.env, HUB_CONTROL_PLANE_PORT: String(await freePort()) });
const usage = createHotRoutes(cp);
createServer((req, res) => {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  if (usage.serves(req.method, path)) usage.handle(req, res, path).catch((err) => sendError(res, err));
  else cp.server.emit('request', req, res);
}).listen(port, '127.0.0.1');
process.once('SIGTERM', () => void cp.stop().then(() => process.exit(0)));
