-- AlterTable
ALTER TABLE "PaymentAttempt" ADD COLUMN "channelId" TEXT;

-- CreateTable
CREATE TABLE "SessionChannel" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "network" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "payerAuthorizer" TEXT NOT NULL,
    "receiver" TEXT NOT NULL,
    "receiverAuthorizer" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "withdrawDelay" INTEGER NOT NULL,
    "salt" TEXT NOT NULL,
    "balance" BIGINT NOT NULL,
    "totalClaimed" BIGINT NOT NULL DEFAULT 0,
    "charged" BIGINT NOT NULL DEFAULT 0,
    "signedMaxClaimable" BIGINT NOT NULL DEFAULT 0,
    "voucherSignature" TEXT,
    "heldBy" TEXT,
    "heldUntil" DATETIME,
    "lastRequestAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Seller" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "organizationId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "upstreamBaseUrl" TEXT NOT NULL,
    "accessEndpointUrl" TEXT,
    "salesEnabled" BOOLEAN NOT NULL DEFAULT false,
    "servicingEnabled" BOOLEAN NOT NULL DEFAULT false,
    "stateful" BOOLEAN NOT NULL DEFAULT false,
    "accountWriteVariant" TEXT NOT NULL DEFAULT 'original',
    "payToAddress" TEXT,
    "networksJson" TEXT NOT NULL DEFAULT '[]',
    "sandbox" BOOLEAN NOT NULL DEFAULT false,
    "settlement" TEXT NOT NULL DEFAULT 'before_response',
    "x402SchemesJson" TEXT NOT NULL DEFAULT '["exact"]',
    "cardAccountId" TEXT,
    "cardChargesEnabled" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Seller_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Seller" ("accessEndpointUrl", "accountWriteVariant", "cardAccountId", "cardChargesEnabled", "createdAt", "id", "name", "networksJson", "organizationId", "payToAddress", "salesEnabled", "sandbox", "servicingEnabled", "settlement", "slug", "stateful", "updatedAt", "upstreamBaseUrl") SELECT "accessEndpointUrl", "accountWriteVariant", "cardAccountId", "cardChargesEnabled", "createdAt", "id", "name", "networksJson", "organizationId", "payToAddress", "salesEnabled", "sandbox", "servicingEnabled", "settlement", "slug", "stateful", "updatedAt", "upstreamBaseUrl" FROM "Seller";
DROP TABLE "Seller";
ALTER TABLE "new_Seller" RENAME TO "Seller";
CREATE UNIQUE INDEX "Seller_slug_key" ON "Seller"("slug");
CREATE UNIQUE INDEX "Seller_cardAccountId_key" ON "Seller"("cardAccountId");
CREATE INDEX "Seller_organizationId_idx" ON "Seller"("organizationId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "SessionChannel_receiver_token_idx" ON "SessionChannel"("receiver", "token");
