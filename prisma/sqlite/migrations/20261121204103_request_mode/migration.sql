-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_RequestRecord" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sellerId" TEXT NOT NULL,
    "serviceId" TEXT,
    "agentId" TEXT,
    "buyerId" TEXT,
    "accessId" TEXT,
    "paymentAttemptId" TEXT,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "upstreamStatus" INTEGER,
    "sandbox" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" DATETIME,
    "mode" TEXT NOT NULL DEFAULT 'paid',
    CONSTRAINT "RequestRecord_sellerId_fkey" FOREIGN KEY ("sellerId") REFERENCES "Seller" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "RequestRecord_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "Agent" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_RequestRecord" ("accessId", "agentId", "buyerId", "completedAt", "createdAt", "id", "lifecycle", "method", "path", "paymentAttemptId", "sandbox", "sellerId", "serviceId", "upstreamStatus") SELECT "accessId", "agentId", "buyerId", "completedAt", "createdAt", "id", "lifecycle", "method", "path", "paymentAttemptId", "sandbox", "sellerId", "serviceId", "upstreamStatus" FROM "RequestRecord";
DROP TABLE "RequestRecord";
ALTER TABLE "new_RequestRecord" RENAME TO "RequestRecord";
CREATE INDEX "RequestRecord_sellerId_createdAt_idx" ON "RequestRecord"("sellerId", "createdAt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
