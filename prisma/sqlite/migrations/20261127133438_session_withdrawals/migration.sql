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
    "refundNonce" INTEGER NOT NULL DEFAULT 0,
    "withdrawRequestedAt" BIGINT NOT NULL DEFAULT 0,
    "heldBy" TEXT,
    "heldUntil" DATETIME,
    "lastRequestAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_SessionChannel" ("balance", "charged", "createdAt", "heldBy", "heldUntil", "id", "lastRequestAt", "network", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer", "refundNonce", "salt", "signedMaxClaimable", "token", "totalClaimed", "totalSettled", "updatedAt", "voucherSignature", "withdrawDelay") SELECT "balance", "charged", "createdAt", "heldBy", "heldUntil", "id", "lastRequestAt", "network", "payer", "payerAuthorizer", "receiver", "receiverAuthorizer", "refundNonce", "salt", "signedMaxClaimable", "token", "totalClaimed", "totalSettled", "updatedAt", "voucherSignature", "withdrawDelay" FROM "SessionChannel";
DROP TABLE "SessionChannel";
ALTER TABLE "new_SessionChannel" RENAME TO "SessionChannel";
CREATE INDEX "SessionChannel_receiver_token_idx" ON "SessionChannel"("receiver", "token");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
