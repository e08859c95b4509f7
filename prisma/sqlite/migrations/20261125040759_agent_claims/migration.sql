-- CreateTable
CREATE TABLE "AgentClaim" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "agentId" TEXT NOT NULL,
    "sellerId" TEXT,
    "payOrigin" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "releaseTokenHash" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "buyerId" TEXT,
    "confirmedAt" DATETIME,
    "releasedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AgentClaim_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Agent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "walletAddress" TEXT NOT NULL,
    "tokenHash" TEXT,
    "buyerId" TEXT,
    "claimedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" DATETIME,
    CONSTRAINT "Agent_buyerId_fkey" FOREIGN KEY ("buyerId") REFERENCES "Buyer" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_Agent" ("buyerId", "claimedAt", "createdAt", "id", "lastSeenAt", "tokenHash", "walletAddress") SELECT "buyerId", "claimedAt", "createdAt", "id", "lastSeenAt", "tokenHash", "walletAddress" FROM "Agent";
DROP TABLE "Agent";
ALTER TABLE "new_Agent" RENAME TO "Agent";
CREATE UNIQUE INDEX "Agent_walletAddress_key" ON "Agent"("walletAddress");
CREATE UNIQUE INDEX "Agent_tokenHash_key" ON "Agent"("tokenHash");
CREATE INDEX "Agent_buyerId_idx" ON "Agent"("buyerId");
CREATE INDEX "Agent_updatedAt_idx" ON "Agent"("updatedAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "AgentClaim_tokenHash_key" ON "AgentClaim"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "AgentClaim_releaseTokenHash_key" ON "AgentClaim"("releaseTokenHash");

-- CreateIndex
CREATE INDEX "AgentClaim_agentId_createdAt_idx" ON "AgentClaim"("agentId", "createdAt");

-- CreateIndex
CREATE INDEX "AgentClaim_email_createdAt_idx" ON "AgentClaim"("email", "createdAt");
