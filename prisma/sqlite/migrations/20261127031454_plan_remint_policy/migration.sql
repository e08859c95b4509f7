-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Plan" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "organizationId" TEXT NOT NULL,
    "serviceId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'standard',
    "billingMode" TEXT NOT NULL,
    "interval" TEXT NOT NULL,
    "basePriceMicros" BIGINT NOT NULL DEFAULT 0,
    "includedCreditMicros" BIGINT NOT NULL DEFAULT 0,
    "includedCreditUnits" INTEGER NOT NULL DEFAULT 0,
    "includedCreditUnitLabel" TEXT,
    "minimumPurchaseMicros" BIGINT NOT NULL DEFAULT 0,
    "verifiedEmailPolicy" TEXT NOT NULL,
    "remintPolicy" TEXT NOT NULL DEFAULT 'rotating',
    "maxClaims" INTEGER,
    "trialsOpened" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Plan_serviceId_fkey" FOREIGN KEY ("serviceId") REFERENCES "Service" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Plan" ("basePriceMicros", "billingMode", "createdAt", "id", "includedCreditMicros", "includedCreditUnitLabel", "includedCreditUnits", "interval", "kind", "maxClaims", "minimumPurchaseMicros", "name", "organizationId", "serviceId", "slug", "trialsOpened", "updatedAt", "verifiedEmailPolicy") SELECT "basePriceMicros", "billingMode", "createdAt", "id", "includedCreditMicros", "includedCreditUnitLabel", "includedCreditUnits", "interval", "kind", "maxClaims", "minimumPurchaseMicros", "name", "organizationId", "serviceId", "slug", "trialsOpened", "updatedAt", "verifiedEmailPolicy" FROM "Plan";
DROP TABLE "Plan";
ALTER TABLE "new_Plan" RENAME TO "Plan";
CREATE INDEX "Plan_organizationId_idx" ON "Plan"("organizationId");
CREATE UNIQUE INDEX "Plan_serviceId_slug_key" ON "Plan"("serviceId", "slug");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
