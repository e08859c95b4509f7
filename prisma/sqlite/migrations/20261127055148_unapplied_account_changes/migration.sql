-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Access" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sellerId" TEXT NOT NULL,
    "planId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "buyerId" TEXT,
    "status" TEXT NOT NULL,
    "periodStart" DATETIME,
    "periodEnd" DATETIME,
    "stateVersion" INTEGER NOT NULL DEFAULT 0,
    "creditGrantedMicros" BIGINT,
    "creditReversedMicros" BIGINT NOT NULL DEFAULT 0,
    "balanceMicros" BIGINT NOT NULL DEFAULT 0,
    "provisioningState" TEXT NOT NULL DEFAULT 'active',
    "unappliedCreditMicros" BIGINT NOT NULL DEFAULT 0,
    "appliedPeriodEnd" DATETIME,
    "canceledAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Access_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Access_planId_fkey" FOREIGN KEY ("planId") REFERENCES "Plan" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Access_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Access_buyerId_fkey" FOREIGN KEY ("buyerId") REFERENCES "Buyer" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_Access" ("agentId", "balanceMicros", "buyerId", "canceledAt", "createdAt", "creditGrantedMicros", "creditReversedMicros", "id", "periodEnd", "periodStart", "planId", "provisioningState", "sellerId", "stateVersion", "status", "updatedAt") SELECT "agentId", "balanceMicros", "buyerId", "canceledAt", "createdAt", "creditGrantedMicros", "creditReversedMicros", "id", "periodEnd", "periodStart", "planId", "provisioningState", "sellerId", "stateVersion", "status", "updatedAt" FROM "Access";
DROP TABLE "Access";
ALTER TABLE "new_Access" RENAME TO "Access";
CREATE INDEX "Access_sellerId_idx" ON "Access"("sellerId");
CREATE INDEX "Access_agentId_idx" ON "Access"("agentId");
CREATE INDEX "Access_buyerId_idx" ON "Access"("buyerId");
CREATE INDEX "Access_planId_idx" ON "Access"("planId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
