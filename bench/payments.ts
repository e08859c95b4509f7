// npm run bench:payments — paid calls through hub beside x402's and mppx's own server stacks, on one chain.
//
// One anvil chain and token. Side by side, in interleaved rounds, at 1 and at 10 clients, each
// paid with the unmodified official client of its protocol (call, get the 402, sign, pay):
//   * hub over x402 (`@x402/fetch`) and over MPP (`mppx/client`): its proxy and control-plane
//     processes (SQLite), in front of a seller built on the SDK;
//   * x402's Express middleware with x402's facilitator (their packages), x402's reference;
//   * mppx's Proxy with its EVM charge method, settling through the same x402 facilitator, in
//     front of a plain seller API: MPP's reference;
//   * the chain alone: EIP-3009 transfers submitted straight to the token, awaiting each receipt,
//     one at a time and ten in flight;
//   * sessions (x402's `batch-settlement`), paid with the unmodified x402 fetch client and x402's
//     batch-settlement client scheme, each of the ten clients with a channel of its own: hub's seller
//     offering `["exact", "batch-settlement"]`, and x402's Express middleware with x402's
//     batch-settlement server scheme and x402's facilitator with its batch-settlement facilitator
//     scheme. A client's first call deposits (in the warm-up), its later calls send vouchers only.
//     The dev chain's batch-settlement contract at x402's address is hub's (x402's packages do not
//     ship theirs): x402's stack runs against it (bench/servers/x402-facilitator.ts says how).
// Every 200 of `exact` and MPP is checked against its own on-chain transfer (a distinct transaction
// that moved the price from the payer to the seller); every voucher call's receipt must charge the
// price and raise its channel's charged total by exactly that, and the claim transactions each
// stack sent are counted on chain. CPU per paid call is read from /proc for each stack's server
// processes, for the clients and for anvil. A long run of transfers then shows whether the
// dev chain keeps its rate as it grows. Finally bench/recover.ts compares native and pure-JS
// signer recovery.
//
// Hub runs twice when PostgreSQL answers at HUB_BENCH_PG_URL (default
// postgresql://postgres@127.0.0.1:5432/postgres, a scratch database dropped afterwards): on SQLite
// and on PostgreSQL, over x402; BENCH_POSTGRES=off skips the second. A third hub on SQLite answers
// the proxy's calls through tRPC's node adapter (HUB_INTERNAL_CALLS=adapter) instead of the direct
// lane, to show what the lane saves; BENCH_ADAPTER=off skips it.
// BENCH_ROUNDS (3), BENCH_CALLS_1 (60) and BENCH_CALLS_10 (200) calls per round, BENCH_LONG_RUN
// (6000) transfers between the two chain measurements. BENCH_QUICK=1 is a smoke run: one round
// of 20 and 60 calls, no long run, SQLite only (each setting above still wins when given).
// BENCH_PROFILE=<dir> writes a CPU profile of hub's proxy and control-plane there (open them in
// Chrome DevTools); BENCH_STACKS=hub skips the reference stacks, BENCH_STACKS=sessions runs only
// hub's `exact` and the two session stacks (and the chain alone), BENCH_STACKS=hub-sessions only
// hub's sessions (to profile the voucher call). BENCH_BASELINE=<another checkout of hub> runs that
// checkout's hub too, sessions on SQLite beside this one's, in the same interleaved rounds (its
// seller paid to a wallet of its own, so its channels are its own): an A/B on one machine state.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { Receipt as MppxReceipt } from 'mppx';
import { evm, Mppx } from 'mppx/client';
import { setGlobalDispatcher } from 'undici';
import { type Address, createPublicClient, createTestClient, createWalletClient, formatUnits, type Hex, http, parseEventLogs } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { readDeploymentFile, writeDeploymentFile } from '../chain/deployment.js';
import { evmChain } from '../chain/evm-chain.js';
import { type LocalChain, startLocalChain } from '../chain/local-chain.js';
import { eip3009Abi, transferWithAuthorizationTypes } from '../control-plane/facilitator/transfer-authorization.js';
import { localhostDispatcher } from '../runtime/localhost-dispatcher.js';
import { turns } from '../runtime/turns.js';
import { cpuMs, withDescendants } from './lib/cpu.js';
import { freePort, Processes, waitUntilUp } from './lib/processes.js';
import { benchPostgres } from './lib/scratch-postgres.js';
import { seedSeller } from './lib/seed.js';
import { claimsBy, sessionCharge, sessionClients } from './lib/sessions.js';

const quick = process.env.BENCH_QUICK === '1';
if (quick) {
  process.env.BENCH_POSTGRES ??= 'off';
  process.env.BENCH_ADAPTER ??= 'off';
}
const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
const callsAt: Record<number, number> = {
  1: Number(process.env.BENCH_CALLS_1 ?? (quick ? 20 : 60)),
  10: Number(process.env.BENCH_CALLS_10 ?? (quick ? 60 : 200)),
};
const longRun = Number(process.env.BENCH_LONG_RUN ?? (quick ? 0 : 6000));
const PRICE_UNITS = 10_000n; // $0.01 in the 6-decimal token
/** What each session client deposits when it opens its channel: 5,000 calls' worth, more than a run makes. */
const SESSION_DEPOSIT_UNITS = 5_000n * PRICE_UNITS;
/** How often both stacks claim what vouchers charged: hub's default (HUB_SESSIONS_CLAIM_INTERVAL_S). */
const CLAIM_INTERVAL_S = 60;
const here = dirname(fileURLToPath(import.meta.url));
const tsx = ['--import', 'tsx'];
const log = (line: string) => process.stderr.write(`${line}\n`);

// Dev accounts: 0 deploys, 1 settles for hub, 2 is hub's seller, 3 pays, 4 is x402's seller,
// 5 settles for x402's facilitator, 6 submits the chain-alone transfers, 7 receives them.
const HUB_PAY_TO = 2;
const PAYER = 3;
const X402_PAY_TO = 4;
const X402_SETTLER = 5;
const CHAIN_SENDER = 6;
const CHAIN_RECEIVER = 7;
/** The hub on PostgreSQL settles from an account of its own: a settler keeps its nonce in memory. */
const PG_SETTLER = 8;
const ADAPTER_SETTLER = 9;
/** The baseline checkout's hub (BENCH_BASELINE): its settler, and its seller's wallet. */
const BASELINE_SETTLER = 10;
const BASELINE_PAY_TO = 11;
const baselineRoot = process.env.BENCH_BASELINE;

/** A stack under test and the official client that pays it: x402's fetch wrapper, or mppx's. */
type Stack = {
  name: string;
  url: (i: number) => string;
  pids: number[];
  payTo: Address;
  /** The client of concurrent client `slot` (a session client holds a channel of its own). */
  pay: (slot: number) => typeof fetch;
  /** The settlement transaction a paid answer names in its receipt (`exact`, MPP). */
  transactionOf: (res: Response) => Hex | undefined;
  /** A session stack: each answer is a voucher (or deposit) on the client's channel, and its settler claims them. */
  sessions?: { settler: Address; charged: Map<number, bigint> };
};
type Round = {
  stack: string;
  clients: number;
  calls: number;
  seconds: number;
  latencies: number[];
  /** CPU of each of the stack's two server processes, of the clients (this process) and of anvil. */
  cpuMs: number[];
  clientCpuMs: number;
  chainCpuMs: number;
  failures: number;
  /** Session calls paid by a voucher alone, and by a deposit. */
  vouchers: number;
  deposits: number;
};

async function main() {
  const processes = new Processes();
  const work = mkdtempSync(join(tmpdir(), 'hub-bench-pay-'));
  let dropScratch: (() => Promise<void>) | undefined;
  let chain: LocalChain | undefined;
  // Interrupted, it still stops every process it started.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void Promise.all([processes.stopAll(), chain?.stop()]).finally(() => process.exit(130)));
  try {
    chain = await startLocalChain({ accounts: baselineRoot ? 12 : 10, fundMicros: 1_000_000_000_000n });
    const chainFile = join(work, 'chain.json');
    await writeDeploymentFile(chainFile, chain);
    const account = (i: number) => chain!.accounts[i]!;

    // x402's stack: their facilitator, their Express middleware.
    const facilitatorPort = await freePort();
    const facilitator = processes.start(process.execPath, [
      ...tsx,
      join(here, 'servers', 'x402-facilitator.ts'),
      String(facilitatorPort),
      chainFile,
      String(X402_SETTLER),
    ]);
    await waitUntilUp(`http://127.0.0.1:${facilitatorPort}/`);
    const expressPort = await freePort();
    const express = processes.start(process.execPath, [
      ...tsx,
      join(here, 'servers', 'x402-express.ts'),
      String(expressPort),
      `http://127.0.0.1:${facilitatorPort}`,
      chainFile,
      account(X402_PAY_TO).address,
      String(CLAIM_INTERVAL_S),
    ]);
    await waitUntilUp(`http://127.0.0.1:${expressPort}/`);

    // hub: a control-plane and a proxy, settling on the same chain; over SQLite, and over
    // PostgreSQL when one answers (each its own pair of processes and seller).
    const startHub = async (
      databaseUrl: string,
      dataDir: string,
      chainFile: string,
      env: Record<string, string> = {},
      x402Schemes?: string[],
      { root = join(here, '..'), payTo = HUB_PAY_TO }: { root?: string; payTo?: number } = {},
    ) => {
      const masterKey = randomBytes(32).toString('hex');
      const [cpPort, proxyPort, sellerPort] = [await freePort(), await freePort(), await freePort()];
      const hubEnv = {
        DATABASE_URL: databaseUrl,
        HUB_DATA_DIR: dataDir,
        HUB_CHAIN_FILE: chainFile,
        HUB_DEV_CHAIN: 'off',
        HUB_MASTER_KEY: masterKey,
        HUB_CONTROL_PLANE_PORT: String(cpPort),
        HUB_PROXY_PORT: String(proxyPort),
        HUB_LOG_LEVEL: 'warn',
        HUB_SESSIONS_CLAIM_INTERVAL_S: String(CLAIM_INTERVAL_S),
        ...env,
      };
      const { kid, secret } = await seedSeller(databaseUrl, masterKey, 'bench', `http://127.0.0.1:${sellerPort}`, {
        payToAddress: account(payTo).address,
        priceMicros: 10_000n,
        ...(x402Schemes ? { x402Schemes } : {}),
      });
      processes.start(process.execPath, [...tsx, join(here, 'servers', 'paid-seller.ts'), String(sellerPort), kid, secret]);
      await waitUntilUp(`http://127.0.0.1:${sellerPort}/`);
      const hubBin = join(root, 'bin', 'hub.js');
      const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
      const controlPlane = processes.start(process.execPath, [...profile, hubBin, 'start', 'control-plane'], hubEnv);
      await waitUntilUp(`http://127.0.0.1:${cpPort}/healthz`);
      const proxy = processes.start(process.execPath, [...profile, hubBin, 'start', 'proxy'], hubEnv);
      await waitUntilUp(`http://127.0.0.1:${proxyPort}/readyz`);
      return { proxyPort, pids: [proxy.pid!, controlPlane.pid!] };
    };
    // The seller on SQLite also takes sessions: its 402 offers `exact` and `batch-settlement`, and
    // each client pays the way it knows.
    const onSqlite = await startHub(`file:${join(work, 'hub.db')}`, work, chainFile, {}, ['exact', 'batch-settlement']);
    const scratch = await benchPostgres(log);
    dropScratch = scratch?.drop;
    /** A hub of its own settles from an account of its own (each settler keeps its nonce in memory). */
    const settlingAs = async (name: string, settler: number) => {
      const file = join(work, `chain-${name}.json`);
      const { address, privateKey } = account(settler);
      await writeDeploymentFile(file, { ...(await readDeploymentFile(chainFile)), settler: { address, privateKey } });
      return file;
    };
    const onPostgres = scratch
      ? await startHub(scratch.url, join(work, 'postgresql'), await settlingAs('postgresql', PG_SETTLER))
      : undefined;
    if (baselineRoot) mkdirSync(join(work, 'baseline'));
    const baseline = baselineRoot
      ? await startHub(
          `file:${join(work, 'baseline', 'hub.db')}`,
          join(work, 'baseline'),
          await settlingAs('baseline', BASELINE_SETTLER),
          {},
          ['exact', 'batch-settlement'],
          { root: baselineRoot, payTo: BASELINE_PAY_TO },
        )
      : undefined;
    if (process.env.BENCH_ADAPTER !== 'off') mkdirSync(join(work, 'adapter'));
    const viaAdapter =
      process.env.BENCH_ADAPTER === 'off'
        ? undefined
        : await startHub(`file:${join(work, 'adapter', 'hub.db')}`, join(work, 'adapter'), await settlingAs('adapter', ADAPTER_SETTLER), {
            HUB_INTERNAL_CALLS: 'adapter',
          });

    // mppx's stack: their Proxy in front of the same kind of seller API, settling through x402's facilitator.
    const [mppxPort, upstreamPort] = [await freePort(), await freePort()];
    processes.start(process.execPath, [...tsx, join(here, 'servers', 'upstream.ts'), String(upstreamPort)]);
    const mppxProxy = processes.start(process.execPath, [
      ...tsx,
      join(here, 'servers', 'mppx-proxy.ts'),
      String(mppxPort),
      `http://127.0.0.1:${facilitatorPort}`,
      chainFile,
      account(X402_PAY_TO).address,
      `http://127.0.0.1:${upstreamPort}`,
    ]);
    await waitUntilUp(`http://127.0.0.1:${upstreamPort}/`);
    await waitUntilUp(`http://127.0.0.1:${mppxPort}/llms.txt`);

    setGlobalDispatcher(localhostDispatcher());
    const payer = privateKeyToAccount(account(PAYER).privateKey as Hex);
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: payer });
    client.setSpendControls({ allowedAssets: true });
    const x402Fetch = wrapFetchWithPayment(fetch, client);
    const payX402 = () => x402Fetch;
    const mppFetch = Mppx.create({
      methods: [evm({ account: payer, authorization: { name: chain.token.name, version: chain.token.version } })],
      polyfill: false,
    }).fetch as typeof fetch;
    const payMpp = () => mppFetch;
    const sessionStack = (stack: Omit<Stack, 'pay' | 'transactionOf' | 'sessions'>, settler: Address): Stack => ({
      ...stack,
      pay: sessionClients(chain!, account(PAYER).privateKey as Hex, SESSION_DEPOSIT_UNITS),
      transactionOf: () => undefined,
      sessions: { settler, charged: new Map() },
    });
    const hub = (
      protocol: string,
      pay: Stack['pay'],
      transactionOf: Stack['transactionOf'],
      on: { proxyPort: number; pids: number[] } = onSqlite,
      database = '',
    ): Stack => ({
      name: `hub (${protocol}${database})`,
      url: (i) => `http://bench.pay.localhost:${on.proxyPort}/search?i=${i}`,
      pids: on.pids,
      payTo: account(HUB_PAY_TO).address,
      pay,
      transactionOf,
    });
    const allStacks: Stack[] = [
      hub('x402', payX402, x402Transaction),
      ...(onPostgres ? [hub('x402', payX402, x402Transaction, onPostgres, ', PostgreSQL')] : []),
      ...(viaAdapter ? [hub('x402', payX402, x402Transaction, viaAdapter, ", tRPC's adapter")] : []),
      {
        name: 'x402 Express + x402 facilitator',
        url: (i) => `http://127.0.0.1:${expressPort}/search?i=${i}`,
        pids: [express.pid!, facilitator.pid!],
        payTo: account(X402_PAY_TO).address,
        pay: payX402,
        transactionOf: x402Transaction,
      },
      hub('MPP', payMpp, mppTransaction),
      {
        name: 'mppx Proxy + x402 facilitator',
        url: (i) => `http://127.0.0.1:${mppxPort}/seller/search?i=${i}`,
        pids: [mppxProxy.pid!, facilitator.pid!],
        payTo: account(X402_PAY_TO).address,
        pay: payMpp,
        transactionOf: mppTransaction,
      },
      sessionStack(
        {
          name: HUB_SESSIONS,
          url: (i) => `http://bench.pay.localhost:${onSqlite.proxyPort}/search?i=${i}`,
          pids: onSqlite.pids,
          payTo: account(HUB_PAY_TO).address,
        },
        chain.settler.address as Address,
      ),
      ...(baseline
        ? [
            sessionStack(
              {
                name: HUB_SESSIONS_BASELINE,
                url: (i) => `http://bench.pay.localhost:${baseline.proxyPort}/search?i=${i}`,
                pids: baseline.pids,
                payTo: account(BASELINE_PAY_TO).address,
              },
              account(BASELINE_SETTLER).address as Address,
            ),
          ]
        : []),
      sessionStack(
        {
          name: X402_SESSIONS,
          url: (i) => `http://127.0.0.1:${expressPort}/session/search?i=${i}`,
          pids: [express.pid!, facilitator.pid!],
          payTo: account(X402_PAY_TO).address,
        },
        account(X402_SETTLER).address as Address,
      ),
    ];
    const only = process.env.BENCH_STACKS;
    const stacks =
      only === 'hub'
        ? allStacks.filter((s) => s.name.startsWith('hub'))
        : only === 'sessions'
          ? allStacks.filter((s) => s.sessions || s.name === 'hub (x402)')
          : only === 'hub-sessions'
            ? allStacks.filter((s) => s.name === HUB_SESSIONS || s.name === HUB_SESSIONS_BASELINE)
            : allStacks;

    const chainAlone = chainAloneRunner(
      chain,
      account(PAYER).privateKey as Hex,
      account(CHAIN_SENDER).privateKey as Hex,
      account(CHAIN_RECEIVER).address,
    );

    // Warm every stack (JIT, connections, caches) before measuring.
    // A session stack's ten clients each open their channel here (their deposits), so the rounds
    // measure voucher calls.
    let next = 0;
    for (const stack of stacks) await runPaidCalls(stack, stack.sessions ? 10 : 1, stack.sessions ? 30 : 10, () => next++, chain);
    await chainAlone(50, 1);

    // What each stack burns doing nothing, which every paid call's CPU figure includes.
    for (const stack of stacks) {
      const before = stack.pids.map(processCpuMs);
      const from = process.hrtime.bigint() / 1000n;
      await new Promise((r) => setTimeout(r, 2_000));
      if (process.env.BENCH_PROFILE) log(`profile window, ${stack.name} at rest: ${from}-${process.hrtime.bigint() / 1000n} µs`);
      const spent = stack.pids.map((pid, i) => processCpuMs(pid) - before[i]!);
      log(`${stack.name} at rest: ${(spent.reduce((sum, ms) => sum + ms, 0) / 2).toFixed(0)} ms CPU per second`);
    }

    const results: Round[] = [];
    const chainRuns: Record<number, ChainAlone[]> = { 1: [], 10: [] };
    const reader = createPublicClient({ transport: http(chain.rpcUrl) });
    const firstBlock = (await reader.getBlockNumber()) + 1n;
    for (let round = 1; round <= rounds; round++) {
      for (const clients of [1, 10]) {
        for (const stack of stacks) {
          const from = process.hrtime.bigint() / 1000n;
          const result = await runPaidCalls(stack, clients, callsAt[clients]!, () => next++, chain);
          results.push(result);
          // The same monotonic clock a CPU profile's sample times are on, in µs: where to look in it.
          if (process.env.BENCH_PROFILE)
            log(`profile window, ${stack.name}, ${clients} client(s): ${from}-${process.hrtime.bigint() / 1000n} µs`);
          log(`round ${round}, ${stack.name}, ${clients} client(s): ${(result.calls / result.seconds).toFixed(1)} paid calls/s`);
        }
        const alone = await chainAlone(callsAt[clients]!, clients);
        chainRuns[clients]!.push(alone);
        log(`round ${round}, chain alone, ${clients} in flight: ${alone.rate.toFixed(0)} transfers/s`);
      }
    }

    // What a session stack's claims cost on chain over the rounds (each claims on its own schedule,
    // hub also on size), and hub's CPU for each of a voucher call's two answers.
    const lastBlock = await reader.getBlockNumber();
    const claims = new Map<string, Awaited<ReturnType<typeof claimsBy>> & { calls: number }>();
    for (const stack of stacks.filter((s) => s.sessions)) {
      const calls = results.filter((r) => r.stack === stack.name).reduce((sum, r) => sum + r.calls, 0);
      claims.set(stack.name, { ...(await claimsBy(chain, stack.sessions!.settler, firstBlock, lastBlock)), calls });
    }
    const hubSessions = stacks.find((s) => s.name === HUB_SESSIONS);
    const challengeCpu = hubSessions ? await challengeOnlyCpu(hubSessions, () => next++) : undefined;

    const today = new Date().toISOString().slice(0, 10);
    console.log(
      `\nPaid calls with the unmodified official clients (x402's and mppx's: call, get the 402, sign, pay), anvil with automine, median of ${rounds} interleaved rounds, ${today}\n`,
    );
    // The two cores are shared: the clients' and anvil's CPU per paid call show what is left for the stack.
    // A stack's CPU is split between its front process (hub's proxy, Express, mppx's Proxy) and its
    // back (hub's control-plane, x402's facilitator).
    console.log(
      "| stack | clients | paid calls/s | p50 ms | p99 ms | CPU ms per paid call (front + back) | clients' CPU ms | anvil's CPU ms | failed |",
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    const summary = new Map<string, { rate: number; p50: number; cpu: number; split: string }>();
    for (const clients of [1, 10]) {
      for (const stack of stacks) {
        const mine = results.filter((r) => r.stack === stack.name && r.clients === clients);
        const rate = medianOf(mine.map((r) => r.calls / r.seconds));
        const latencies = mine.flatMap((r) => r.latencies).sort((a, b) => a - b);
        const cpuOf = (r: Round) => r.cpuMs.reduce((sum, ms) => sum + ms, 0) / r.calls;
        const cpu = medianOf(mine.map(cpuOf));
        const split = stack.pids.map((_, i) => msOf(medianOf(mine.map((r) => r.cpuMs[i]! / r.calls)))).join(' + ');
        const clientCpu = medianOf(mine.map((r) => r.clientCpuMs / r.calls));
        const chainCpu = medianOf(mine.map((r) => r.chainCpuMs / r.calls));
        const failed = mine.reduce((sum, r) => sum + r.failures, 0);
        summary.set(`${stack.name}@${clients}`, { rate, p50: percentile(latencies, 50), cpu, split });
        console.log(
          `| ${stack.name} | ${clients} | ${rate.toFixed(1)} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${msOf(cpu)} (${split}) | ${msOf(clientCpu)} | ${msOf(chainCpu)} | ${failed} |`,
        );
      }
      // The sender's CPU stands where a stack's clients' does: it signs nothing in the timed part
      // (the authorizations are signed beforehand), it sends and polls for receipts.
      const alone = chainRuns[clients]!;
      console.log(
        `| chain alone (transfers, awaiting each receipt) | ${clients} | ${medianOf(alone.map((a) => a.rate)).toFixed(0)} | | | | ${medianOf(alone.map((a) => a.senderCpuMs)).toFixed(1)} | ${medianOf(alone.map((a) => a.chainCpuMs)).toFixed(1)} | |`,
      );
    }

    // This checkout against the baseline's, round by round (each pair ran one after the other).
    if (baseline) {
      console.log('\nThis checkout against the baseline (BENCH_BASELINE), hub sessions, per round:');
      for (const clients of [1, 10]) {
        const of = (name: string) => results.filter((r) => r.stack === name && r.clients === clients);
        const cpuOf = (r: Round) => r.cpuMs.map((ms) => ms / r.calls);
        const ours = of(HUB_SESSIONS).map(cpuOf);
        const theirs = of(HUB_SESSIONS_BASELINE).map(cpuOf);
        const total = (split: number[]) => split.reduce((sum, ms) => sum + ms, 0);
        const rounds = ours.map((mine, i) => `${msOf(total(theirs[i]!))} → ${msOf(total(mine))}`).join(', ');
        const ratio = medianOf(ours.map((mine, i) => total(mine) / total(theirs[i]!)));
        const part = (i: number) => `${msOf(medianOf(theirs.map((t) => t[i]!)))} → ${msOf(medianOf(ours.map((o) => o[i]!)))}`;
        console.log(
          `  ${clients} client(s): CPU ms per voucher call, baseline → this: ${rounds} (median ratio ${ratio.toFixed(2)}×; proxy ${part(0)}, control-plane ${part(1)})`,
        );
      }
    }

    const onPg = summary.get('hub (x402, PostgreSQL)@10');
    if (onPg) {
      const onLite = summary.get('hub (x402)@10')!;
      console.log(
        `\nhub (x402) on PostgreSQL, 10 clients: paid calls/s / on SQLite = ${(onPg.rate / onLite.rate).toFixed(2)}× (target ≥ 0.80×)`,
      );
    }
    const onAdapter = summary.get("hub (x402, tRPC's adapter)@10");
    if (onAdapter) {
      const direct = summary.get('hub (x402)@10')!;
      console.log(
        `hub (x402) through tRPC's adapter, 10 clients: paid calls/s / direct lane = ${(onAdapter.rate / direct.rate).toFixed(2)}×; CPU per paid call ${onAdapter.cpu.toFixed(1)} ms against ${direct.cpu.toFixed(1)} ms`,
      );
    }
    if (summary.has('x402 Express + x402 facilitator@10') && summary.has('mppx Proxy + x402 facilitator@10')) {
      const chain10 = medianOf(chainRuns[10]!.map((a) => a.rate));
      console.log('');
      for (const [hub, reference, short] of [
        ['hub (x402)', 'x402 Express + x402 facilitator', 'x402'],
        ['hub (MPP)', 'mppx Proxy + x402 facilitator', 'mppx'],
      ] as const) {
        const [hub1, ref1, hub10, ref10] = [`${hub}@1`, `${reference}@1`, `${hub}@10`, `${reference}@10`].map((key) => summary.get(key)!);
        console.log(`${hub}, 1 client:   p50 / ${short}'s = ${(hub1!.p50 / ref1!.p50).toFixed(2)}× (target ≤ 1.00×)`);
        console.log(`${hub}, 10 clients: paid calls/s / ${short}'s = ${(hub10!.rate / ref10!.rate).toFixed(2)}× (target ≥ 1.50×)`);
        console.log(
          `${hub}, 10 clients: paid calls/s / chain alone with ten in flight = ${(hub10!.rate / chain10).toFixed(2)}× (target ≥ 0.80×)`,
        );
        console.log(`${hub}, CPU per paid call at 10 clients: ${hub10!.cpu.toFixed(1)} ms, ${short}'s ${ref10!.cpu.toFixed(1)} ms`);
      }
    }

    const sessions10 = summary.get(`${HUB_SESSIONS}@10`);
    if (sessions10) {
      const chain10 = medianOf(chainRuns[10]!.map((a) => a.rate));
      const sessions1 = summary.get(`${HUB_SESSIONS}@1`)!;
      const exact1 = summary.get('hub (x402)@1');
      const reference10 = summary.get(`${X402_SESSIONS}@10`);
      const deposits = results.filter((r) => r.stack === HUB_SESSIONS).reduce((sum, r) => sum + r.deposits, 0);
      console.log(`\nSessions (x402 batch-settlement; ${deposits} deposit(s) among the measured calls, the rest vouchers):`);
      const target = (line: string, ratio: number, met: boolean, goal: string) =>
        console.log(`${line} = ${ratio.toFixed(2)}${goal.endsWith('ms') ? ' ms' : '×'} (target ${goal}: ${met ? 'met' : 'NOT met'})`);
      target(
        `${HUB_SESSIONS}, 10 clients: paid calls/s / chain alone with ten in flight`,
        sessions10.rate / chain10,
        sessions10.rate >= 5 * chain10,
        '≥ 5×',
      );
      if (reference10)
        target(
          `${HUB_SESSIONS}, 10 clients: paid calls/s / x402's batch-settlement stack`,
          sessions10.rate / reference10.rate,
          sessions10.rate >= 2 * reference10.rate,
          '≥ 2×',
        );
      if (exact1)
        target(
          `${HUB_SESSIONS}, 1 client: p50 / hub's own exact p50`,
          sessions1.p50 / exact1.p50,
          sessions1.p50 * 4 <= exact1.p50,
          '≤ 0.25×',
        );
      target(
        `${HUB_SESSIONS}, hub's CPU per voucher call at 10 clients (proxy + control-plane: ${sessions10.split})`,
        sessions10.cpu,
        sessions10.cpu <= 1,
        '≤ 1 ms',
      );
      if (challengeCpu !== undefined)
        console.log(
          `  of which the 402 answer (proxy + control-plane: ${challengeCpu.split}) ${challengeCpu.total.toFixed(2)} ms, the paid answer about ${(sessions10.cpu - challengeCpu.total).toFixed(2)} ms`,
        );
      for (const [name, c] of claims)
        console.log(
          `${name}: ${((c.transactions * 1000) / c.calls).toFixed(1)} claim transactions per 1,000 calls (${c.transactions} for ${c.calls} calls, ${c.channels} channel rows, $${formatUnits(c.units, 6)} claimed; claims every ${CLAIM_INTERVAL_S} s${name === HUB_SESSIONS ? ', and at once for a channel with $1.00 unclaimed' : ''})`,
        );
    }

    // A long run: the dev chain must keep its rate as its history grows. Mining an empty block
    // shows the cost that grows with the chain's length alone; the transfer rate also carries
    // the cost of the token's storage, which every EIP-3009 authorization adds a slot to.
    if (longRun > 0) {
      const emptyBefore = await emptyBlockMs(chain.rpcUrl);
      const before = (await chainAlone(300, 10)).rate;
      log(`long run: ${longRun} transfers…`);
      for (let done = 0; done < longRun; done += 1000) await chainAlone(Math.min(1000, longRun - done), 10);
      const after = (await chainAlone(300, 10)).rate;
      const emptyAfter = await emptyBlockMs(chain.rpcUrl);
      const blocks = await reader.getBlockNumber();
      console.log(
        `\nDev chain over a long run (${blocks} blocks in all): ${before.toFixed(0)} transfers/s before ${longRun} more, ${after.toFixed(0)}/s after (${(after / before).toFixed(2)}×); an empty block mined in ${emptyBefore.toFixed(3)} ms before, ${emptyAfter.toFixed(3)} ms after`,
      );
    }
  } finally {
    await processes.stopAll();
    await chain?.stop();
    await dropScratch?.();
    rmSync(work, { recursive: true, force: true });
  }

  console.log('\nSignature verification alone (bench/recover.ts):\n');
  const seconds = quick ? '0.2' : '2';
  console.log(execFileSync(process.execPath, ['--import', 'tsx', join(here, 'recover.ts'), '--seconds', seconds], { encoding: 'utf8' }));
}

/**
 * `calls` paid calls from `clients` concurrent clients; each 200 must carry a receipt naming its
 * own transaction, which must have moved the price from the payer to the stack's seller.
 */
async function runPaidCalls(stack: Stack, clients: number, calls: number, nextIndex: () => number, chain: LocalChain): Promise<Round> {
  const latencies: number[] = [];
  const transactions: Hex[] = [];
  const deposits: Hex[] = [];
  let failures = 0;
  let vouchers = 0;
  let started = 0;
  const cpuBefore = stack.pids.map(processCpuMs);
  const chainCpuBefore = cpuMs([chain.pid]);
  const clientCpuBefore = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, slot) => {
      const pay = stack.pay(slot);
      while (started < calls) {
        started++;
        const begun = performance.now();
        const res = await pay(stack.url(nextIndex()));
        const body = await res.text();
        latencies.push(performance.now() - begun);
        let paid = false;
        if (res.status === 200 && stack.sessions) {
          // A voucher call charges the price and raises the client's channel by exactly that.
          const charge = sessionCharge(res);
          const before = stack.sessions.charged.get(slot);
          paid = !!charge && charge.charged === PRICE_UNITS && (before === undefined || charge.cumulative === before + PRICE_UNITS);
          if (charge) stack.sessions.charged.set(slot, charge.cumulative);
          if (charge?.transaction) deposits.push(charge.transaction as Hex);
          else if (paid) vouchers++;
        } else {
          const transaction = res.status === 200 ? stack.transactionOf(res) : undefined;
          if (transaction) transactions.push(transaction);
          paid = !!transaction;
        }
        if (!paid && failures++ === 0)
          log(`${stack.name}: a paid call answered ${res.status} ${body.slice(0, 300)} ${JSON.stringify(Object.fromEntries(res.headers))}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = stack.pids.map((pid, i) => processCpuMs(pid) - cpuBefore[i]!);
  const chainCpu = cpuMs([chain.pid]) - chainCpuBefore;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  failures += await unpaid(chain, transactions, stack.payTo);
  failures += await unmined(chain, deposits);
  const clientCpuMs = (clientCpu.user + clientCpu.system) / 1000;
  return {
    stack: stack.name,
    clients,
    calls,
    seconds,
    latencies,
    cpuMs: cpu,
    clientCpuMs,
    chainCpuMs: chainCpu,
    failures,
    vouchers,
    deposits: deposits.length,
  };
}

/** CPU of a stack's process and of the processes it started (hub's proxy serves its port from `HUB_PROXY_WORKERS` workers). */
function processCpuMs(pid: number): number {
  return cpuMs(withDescendants(pid));
}

/** How many of `transactions` did not succeed on chain (a session's deposits). */
async function unmined(chain: LocalChain, transactions: Hex[]): Promise<number> {
  const reader = createPublicClient({ transport: http(chain.rpcUrl) });
  let failed = 0;
  for (const hash of transactions) if ((await reader.getTransactionReceipt({ hash })).status !== 'success') failed++;
  return failed;
}

/**
 * hub's CPU (proxy, control-plane) per 402 alone, the first of a voucher call's two answers: ten
 * clients asking without paying, as the x402 client does before each paid retry.
 */
async function challengeOnlyCpu(stack: Stack, nextIndex: () => number): Promise<{ total: number; split: string }> {
  const calls = callsAt[10]!;
  let started = 0;
  const before = stack.pids.map(processCpuMs);
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (started++ < calls) {
        const res = await fetch(stack.url(nextIndex()));
        await res.arrayBuffer();
        if (res.status !== 402) throw new Error(`an unpaid call to ${stack.name} answered ${res.status}`);
      }
    }),
  );
  const each = stack.pids.map((pid, i) => (processCpuMs(pid) - before[i]!) / calls);
  return { total: each.reduce((sum, ms) => sum + ms, 0), split: each.map((ms) => ms.toFixed(2)).join(' + ') };
}

/** How many of `transactions` are not each a distinct mined transfer of the price to `payTo`. */
async function unpaid(chain: LocalChain, transactions: Hex[], payTo: Address): Promise<number> {
  const reader = createPublicClient({ transport: http(chain.rpcUrl) });
  let missing = transactions.length - new Set(transactions).size;
  for (const hash of new Set(transactions)) {
    const receipt = await reader.getTransactionReceipt({ hash });
    const paid = parseEventLogs({ abi: eip3009Abi, eventName: 'Transfer', logs: receipt.logs }).some(
      (log) => log.args.to.toLowerCase() === payTo.toLowerCase() && log.args.value === PRICE_UNITS,
    );
    if (receipt.status !== 'success' || !paid) missing++;
  }
  return missing;
}

/**
 * The chain alone: `count` EIP-3009 transfers signed by the payer beforehand and submitted
 * straight to the token, `inFlight` at a time, each awaited until its receipt is read. Returns
 * transfers per second.
 */
function chainAloneRunner(chain: LocalChain, payerKey: Hex, senderKey: Hex, receiver: Address) {
  const viemChain = evmChain(chain.chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl);
  const reader = createPublicClient({ chain: viemChain, transport });
  const sender = createWalletClient({ account: privateKeyToAccount(senderKey), chain: viemChain, transport });
  const payer = privateKeyToAccount(payerKey);
  const domain = { name: chain.token.name, version: chain.token.version, chainId: chain.chainId, verifyingContract: chain.token.address };
  let nonce: number | undefined;
  const inTurn = turns();

  /** Transfers per second, and the CPU per transfer of the sender (this process) and of anvil. */
  return async (count: number, inFlight: number): Promise<ChainAlone> => {
    const signed = await Promise.all(
      Array.from({ length: count }, async () => {
        const message = {
          from: payer.address,
          to: receiver,
          value: PRICE_UNITS,
          validAfter: 0n,
          validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
          nonce: `0x${randomBytes(32).toString('hex')}` as Hex,
        };
        const signature = await payer.signTypedData({
          domain,
          types: transferWithAuthorizationTypes,
          primaryType: 'TransferWithAuthorization',
          message,
        });
        return { message, signature };
      }),
    );
    nonce ??= await reader.getTransactionCount({ address: sender.account.address, blockTag: 'pending' });
    const fees = await reader.estimateFeesPerGas();
    let nextTransfer = 0;
    const t0 = performance.now();
    const senderCpuBefore = process.cpuUsage();
    const chainCpuBefore = cpuMs([chain.pid]);
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (nextTransfer < signed.length) {
          const { message: m, signature } = signed[nextTransfer++]!;
          // Sent in nonce order, as hub's settler sends: anvil's automine can leave a transaction
          // that overtook its predecessor unmined.
          const hash = await inTurn(() =>
            sender.writeContract({
              address: chain.token.address,
              abi: eip3009Abi,
              functionName: 'transferWithAuthorization',
              args: [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature],
              nonce: nonce!++,
              gas: 120_000n,
              maxFeePerGas: fees.maxFeePerGas,
              maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
            }),
          );
          for (const deadline = Date.now() + 30_000; ; ) {
            const receipt = await reader.getTransactionReceipt({ hash }).catch(() => undefined);
            if (receipt?.status === 'success') break;
            if (receipt) throw new Error(`a chain-alone transfer reverted (${hash})`);
            if (Date.now() > deadline) throw new Error(`a chain-alone transfer was not mined within 30 s (${hash})`);
            await new Promise((r) => setTimeout(r, 2));
          }
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const senderCpu = process.cpuUsage(senderCpuBefore);
    return {
      rate: count / seconds,
      senderCpuMs: (senderCpu.user + senderCpu.system) / 1000 / count,
      chainCpuMs: (cpuMs([chain.pid]) - chainCpuBefore) / count,
    };
  };
}

type ChainAlone = { rate: number; senderCpuMs: number; chainCpuMs: number };

const HUB_SESSIONS = 'hub (x402 batch-settlement)';
const X402_SESSIONS = 'x402 Express + x402 facilitator (batch-settlement)';
const HUB_SESSIONS_BASELINE = 'hub (x402 batch-settlement), baseline checkout';

/** Milliseconds anvil takes to mine one empty block, over 200 of them. */
async function emptyBlockMs(rpcUrl: string): Promise<number> {
  const t0 = performance.now();
  await createTestClient({ mode: 'anvil', transport: http(rpcUrl) }).mine({ blocks: 200 });
  return (performance.now() - t0) / 200;
}

/** The transaction of a successful x402 settlement (`PAYMENT-RESPONSE`). */
function x402Transaction(res: Response): Hex | undefined {
  const header = res.headers.get('payment-response');
  if (!header) return undefined;
  const settled = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { success?: boolean; transaction?: Hex };
  return settled.success ? settled.transaction : undefined;
}

/** The reference of a successful MPP receipt (`Payment-Receipt`). */
function mppTransaction(res: Response): Hex | undefined {
  try {
    const receipt = MppxReceipt.fromResponse(res);
    return receipt.status === 'success' ? (receipt.reference as Hex) : undefined;
  } catch {
    return undefined;
  }
}

/** CPU milliseconds as the table prints them: to the hundredth below 10 ms (a voucher call's are fractions of one). */
function msOf(ms: number): string {
  return ms < 10 ? ms.toFixed(2) : ms.toFixed(1);
}

function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bench:payments failed: ${(err as Error).stack}`);
    process.exit(1);
  },
);
