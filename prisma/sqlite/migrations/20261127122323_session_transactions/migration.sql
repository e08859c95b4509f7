-- CreateTable
CREATE TABLE "SessionTransaction" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "network" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "openKey" TEXT,
    "transaction" TEXT,
    "itemsJson" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "error" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SessionCharge" (
    "attemptId" TEXT NOT NULL PRIMARY KEY,
    "sellerId" TEXT NOT NULL,
    "channelId" TEXT NOT NULL,
    "chargedMicros" BIGINT NOT NULL,
    "cumulative" BIGINT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_SessionChannel" (
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
    "totalSettled" BIGINT NOT NULL DEFAULT 0,
    "charged" BIGINT NOT NULL DEFAULT 0,
    "signedMaxClaimable" BIGINT NOT NULL DEFAULT 0,
    "voucherSignature" TEXT,
    "heldBy" TEXT,
    "heldUntil" DATETIME,
    "lastRequestAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_SessionChannel" ("balance", "charged", "createdAt", "heldBy", "heldUntil", "id", "lastRequestAt", "network", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer", "salt", "signedMaxClaimable", "token", "totalClaimed", "updatedAt", "voucherSignature", "withdrawDelay") SELECT "balance", "charged", "createdAt", "heldBy", "heldUntil", "id", "lastRequestAt", "network", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer", "salt", "signedMaxClaimable", "token", "totalClaimed", "updatedAt", "voucherSignature", "withdrawDelay" FROM "SessionChannel";
DROP TABLE "SessionChannel";
ALTER TABLE "new_SessionChannel" RENAME TO "SessionChannel";
CREATE INDEX "SessionChannel_receiver_token_idx" ON "SessionChannel"("receiver", "token");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "SessionTransaction_openKey_key" ON "SessionTransaction"("openKey");

-- CreateIndex
CREATE INDEX "SessionTransaction_network_status_idx" ON "SessionTransaction"("network", "status");

-- CreateIndex
CREATE INDEX "SessionCharge_sellerId_createdAt_idx" ON "SessionCharge"("sellerId", "createdAt");
