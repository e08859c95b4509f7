import { join } from 'node:path';
import type { Hex } from 'viem';
import { readDeploymentFile } from '../../chain/deployment.js';

/**
 * The demo agent's paying wallet: AGENT_PRIVATE_KEY, or the last funded account of the local chain
 * described in $HUB_DATA_DIR/chain.json (default ./data). Without either, one line saying what to do.
 */
export async function walletKey(): Promise<Hex> {
  if (process.env.AGENT_PRIVATE_KEY) return process.env.AGENT_PRIVATE_KEY as Hex;
  const file = process.env.HUB_CHAIN_FILE ?? join(process.env.HUB_DATA_DIR ?? 'data', 'chain.json');
  try {
    return (await readDeploymentFile(file)).accounts.at(-1)!.privateKey as Hex;
  } catch {
    console.error(`no wallet: set AGENT_PRIVATE_KEY, or start hub first (in development npm start runs a local chain and writes ${file})`);
    process.exit(2);
  }
}
