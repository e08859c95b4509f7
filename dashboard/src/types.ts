/** The `/v1` answers the dashboard reads: the fields it shows, as the OpenAPI document names them. */

export type User = { id: string; email: string; name: string | null };
export type Organization = { id: string; name: string; role: 'admin' | 'member'; current: boolean };
export type Member = { id: string; email: string; name: string | null; role: 'admin' | 'member'; createdAt: string };
export type ApiKey = { id: string; name: string; keyPrefix: string; scopes: string[]; createdAt: string; lastUsedAt: string | null };

export type Seller = {
  id: string;
  name: string;
  slug: string;
  payHost: string;
  upstreamBaseUrl: string;
  payToAddress: string | null;
  networks: string[];
  hostnames: string[];
};
export type SigningSecret = { id: string; status: 'active' | 'retired'; createdAt: string };
export type StatefulAccess = { accessEndpointUrl: string; salesEnabled: boolean; servicingEnabled: boolean };
export type Service = { id: string; name: string; slug: string };
export type Meter = { id: string; key: string; unit: string };
export type Plan = { id: string; name: string; slug: string; billingMode: string; interval: string };
export type PlanMeterPrice = { id: string; meter: Meter; priceUsd: string; unitSize: number; includedUnits: number };

export type Transaction = {
  id: string;
  kind: string;
  status: string;
  paymentMethod: string;
  amountUsd: string;
  network: string;
  createdAt: string;
  agent: { walletAddress: string } | null;
};
export type SellerAnalytics = {
  days: number;
  calls: number;
  transactions: number;
  revenueUsd: string;
  newWallets: number;
  attempts: number;
  successRate: number;
  recentTransactions: Transaction[];
  /** Voucher charges (x402 batch-settlement sessions) by how far their money has moved. */
  sessionRevenue: { chargedUsd: string; unclaimedUsd: string; claimedUsd: string; settledUsd: string };
};
export type PageViews = {
  views: number;
  byClass: Record<'human' | 'agent' | 'crawler' | 'unknown', number>;
  perDay: { date: string; human: number; agent: number; crawler: number; unknown: number }[];
  topPaths: { value: string; views: number }[];
};

export type Account = {
  accessId: string;
  status: string;
  provisioningState: string;
  deliveryStatus: string | null;
  agentId: string;
  plan: { name: string };
  balanceUsd: string | null;
  createdAt: string;
};
export type AccountWrite = {
  id: string;
  accessId: string;
  stateVersion: number;
  status: string;
  attempts: number;
  lastError: string | null;
  lastHttpStatus: number | null;
  createdAt: string;
};
export type TryAnswer = { status: number; headers: Record<string, string>; paymentRequired: unknown; body: string };

export type Discovery = {
  payUrl: string;
  documents: { openapi: { url: string; body: unknown }; llmsTxt: { url: string; body: string } };
  listing: { complete: boolean; issues: { code: string; message: string; subject?: string }[] };
};
