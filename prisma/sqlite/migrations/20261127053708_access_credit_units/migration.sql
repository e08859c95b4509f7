-- CreateTable
CREATE TABLE "AccessCreditUnitsUsage" (
    "accessId" TEXT NOT NULL,
    "periodStart" DATETIME NOT NULL,
    "unitsUsed" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("accessId", "periodStart"),
    CONSTRAINT "AccessCreditUnitsUsage_accessId_fkey" FOREIGN KEY ("accessId") REFERENCES "Access" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_UsageEventItem" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "usageEventId" TEXT NOT NULL,
    "meterId" TEXT NOT NULL,
    "quantity" BIGINT NOT NULL,
    "includedUnits" BIGINT NOT NULL DEFAULT 0,
    "creditUnits" BIGINT NOT NULL DEFAULT 0,
    "costMicros" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "UsageEventItem_usageEventId_fkey" FOREIGN KEY ("usageEventId") REFERENCES "UsageEvent" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_UsageEventItem" ("costMicros", "id", "includedUnits", "meterId", "quantity", "usageEventId") SELECT "costMicros", "id", "includedUnits", "meterId", "quantity", "usageEventId" FROM "UsageEventItem";
DROP TABLE "UsageEventItem";
ALTER TABLE "new_UsageEventItem" RENAME TO "UsageEventItem";
CREATE INDEX "UsageEventItem_usageEventId_idx" ON "UsageEventItem"("usageEventId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
