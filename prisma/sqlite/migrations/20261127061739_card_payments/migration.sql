-- AlterTable
ALTER TABLE "CheckoutSession" ADD COLUMN "planSlug" TEXT;

-- CreateTable
CREATE TABLE "OrganizationPlan" (
    "organizationId" TEXT NOT NULL PRIMARY KEY,
    "planSlug" TEXT NOT NULL,
    "subscriptionId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "currentPeriodStart" DATETIME,
    "currentPeriodEnd" DATETIME,
    "cancelAtPeriodEnd" BOOLEAN NOT NULL DEFAULT false,
    "trialEnd" DATETIME,
    "trialUsed" BOOLEAN NOT NULL DEFAULT false,
    "creditGrantedMicros" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "OrganizationPlan_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "CardPayment" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sellerId" TEXT NOT NULL,
    "accessId" TEXT,
    "cardAccountId" TEXT NOT NULL,
    "chargeId" TEXT,
    "amountMicros" BIGINT NOT NULL,
    "refundedMicros" BIGINT NOT NULL DEFAULT 0,
    "disputeLostMicros" BIGINT NOT NULL DEFAULT 0,
    "disputeStatus" TEXT,
    "status" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "ProviderEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "type" TEXT NOT NULL,
    "receivedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
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
    "cardAccountId" TEXT,
    "cardChargesEnabled" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Seller_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Seller" ("accessEndpointUrl", "accountWriteVariant", "createdAt", "id", "name", "networksJson", "organizationId", "payToAddress", "salesEnabled", "sandbox", "servicingEnabled", "settlement", "slug", "stateful", "updatedAt", "upstreamBaseUrl") SELECT "accessEndpointUrl", "accountWriteVariant", "createdAt", "id", "name", "networksJson", "organizationId", "payToAddress", "salesEnabled", "sandbox", "servicingEnabled", "settlement", "slug", "stateful", "updatedAt", "upstreamBaseUrl" FROM "Seller";
DROP TABLE "Seller";
ALTER TABLE "new_Seller" RENAME TO "Seller";
CREATE UNIQUE INDEX "Seller_slug_key" ON "Seller"("slug");
CREATE UNIQUE INDEX "Seller_cardAccountId_key" ON "Seller"("cardAccountId");
CREATE INDEX "Seller_organizationId_idx" ON "Seller"("organizationId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "CardPayment_chargeId_key" ON "CardPayment"("chargeId");

-- CreateIndex
CREATE INDEX "CardPayment_accessId_idx" ON "CardPayment"("accessId");

-- CreateIndex
CREATE INDEX "CardPayment_sellerId_idx" ON "CardPayment"("sellerId");
