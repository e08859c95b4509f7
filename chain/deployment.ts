import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Address } from 'viem';
import type { DevAccount } from './dev-accounts.js';

/**
 * What a running dev chain looks like to the rest of hub: where to reach it, which token to take
 * payments in (its EIP-712 domain is what x402 requirements carry in `extra`), and which keys to
 * pay and settle with. Written to `data/chain.json` by `hub chain up`.
 */
export type ChainDeployment = {
  chainId: number;
  /** CAIP-2 id, as x402 requirements name networks. */
  network: `eip155:${number}`;
  rpcUrl: string;
  token: { address: Address; name: string; symbol: string; version: string; decimals: number };
  /** The HubEscrow ceiling-priced calls pay into; the settler operates it. Absent on older chain files. */
  escrow?: Address;
  /**
   * hub's x402 batch-settlement channel contract and its ERC-3009 deposit collector, at the
   * addresses x402's client signs for. Absent on older chain files: no sessions.
   */
  batchSettlement?: { contract: Address; collector: Address };
  /** Deployed the token; holds its admin and minter roles (the demo faucet mints with it). */
  deployer: DevAccount;
  /** Submits transferWithAuthorization and pays the gas: the local facilitator's key. */
  settler: DevAccount;
  /** Every dev account with the token units minted to it at start (deployer and settler included). */
  accounts: (DevAccount & { tokenUnits: bigint })[];
};

type DeploymentJson = Omit<ChainDeployment, 'accounts'> & {
  note: string;
  accounts: (DevAccount & { tokenUnits: string })[];
};

const NOTE = 'Development chain: these keys are public knowledge. Never send anything of value to them.';

export function deploymentToJson(deployment: ChainDeployment): DeploymentJson {
  return {
    note: NOTE,
    ...deployment,
    accounts: deployment.accounts.map((a) => ({ ...a, tokenUnits: a.tokenUnits.toString() })),
  };
}

export function deploymentFromJson(json: DeploymentJson): ChainDeployment {
  const { note: _note, ...rest } = json;
  return { ...rest, accounts: json.accounts.map((a) => ({ ...a, tokenUnits: BigInt(a.tokenUnits) })) };
}

export async function writeDeploymentFile(path: string, deployment: ChainDeployment): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  // Whoever reads the file (the proxy, the demo) must never see it half written.
  const partial = `${path}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(deploymentToJson(deployment), null, 2)}\n`, { mode: 0o600 });
  await rename(partial, path);
}

export async function readDeploymentFile(path: string): Promise<ChainDeployment> {
  return deploymentFromJson(JSON.parse(await readFile(path, 'utf8')) as DeploymentJson);
}
