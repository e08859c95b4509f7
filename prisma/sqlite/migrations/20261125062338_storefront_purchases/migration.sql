-- AlterTable
ALTER TABLE "Access" ADD COLUMN "canceledAt" DATETIME;

-- AlterTable
ALTER TABLE "PaymentAttempt" ADD COLUMN "accessId" TEXT;
ALTER TABLE "PaymentAttempt" ADD COLUMN "purchaseJson" TEXT;

-- CreateTable
CREATE TABLE "TrialClaim" (
    "planId" TEXT NOT NULL,
    "takerId" TEXT NOT NULL,
    "accessId" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("planId", "takerId")
);

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
    "maxClaims" INTEGER,
    "trialsOpened" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Plan_serviceId_fkey" FOREIGN KEY ("serviceId") REFERENCES "Service" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Plan" ("basePriceMicros", "billingMode", "createdAt", "id", "includedCreditMicros", "includedCreditUnitLabel", "includedCreditUnits", "interval", "kind", "maxClaims", "minimumPurchaseMicros", "name", "organizationId", "serviceId", "slug", "updatedAt", "verifiedEmailPolicy") SELECT "basePriceMicros", "billingMode", "createdAt", "id", "includedCreditMicros", "includedCreditUnitLabel", "includedCreditUnits", "interval", "kind", "maxClaims", "minimumPurchaseMicros", "name", "organizationId", "serviceId", "slug", "updatedAt", "verifiedEmailPolicy" FROM "Plan";
DROP TABLE "Plan";
ALTER TABLE "new_Plan" RENAME TO "Plan";
CREATE INDEX "Plan_organizationId_idx" ON "Plan"("organizationId");
CREATE UNIQUE INDEX "Plan_serviceId_slug_key" ON "Plan"("serviceId", "slug");
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
    "payToAddress" TEXT,
    "networksJson" TEXT NOT NULL DEFAULT '[]',
    "jwksJson" TEXT,
    "jwkPrivateJson" TEXT,
    "sandbox" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Seller_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Seller" ("accessEndpointUrl", "createdAt", "id", "jwkPrivateJson", "jwksJson", "name", "networksJson", "organizationId", "payToAddress", "salesEnabled", "sandbox", "servicingEnabled", "slug", "updatedAt", "upstreamBaseUrl") SELECT "accessEndpointUrl", "createdAt", "id", "jwkPrivateJson", "jwksJson", "name", "networksJson", "organizationId", "payToAddress", "salesEnabled", "sandbox", "servicingEnabled", "slug", "updatedAt", "upstreamBaseUrl" FROM "Seller";
DROP TABLE "Seller";
ALTER TABLE "new_Seller" RENAME TO "Seller";
CREATE UNIQUE INDEX "Seller_slug_key" ON "Seller"("slug");
CREATE INDEX "Seller_organizationId_idx" ON "Seller"("organizationId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "Access_planId_idx" ON "Access"("planId");
