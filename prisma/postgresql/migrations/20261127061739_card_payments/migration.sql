-- AlterTable
ALTER TABLE "CheckoutSession" ADD COLUMN     "planSlug" TEXT;

-- AlterTable
ALTER TABLE "Seller" ADD COLUMN     "cardAccountId" TEXT,
ADD COLUMN     "cardChargesEnabled" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "OrganizationPlan" (
    "organizationId" TEXT NOT NULL,
    "planSlug" TEXT NOT NULL,
    "subscriptionId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "currentPeriodStart" TIMESTAMP(3),
    "currentPeriodEnd" TIMESTAMP(3),
    "cancelAtPeriodEnd" BOOLEAN NOT NULL DEFAULT false,
    "trialEnd" TIMESTAMP(3),
    "trialUsed" BOOLEAN NOT NULL DEFAULT false,
    "creditGrantedMicros" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "OrganizationPlan_pkey" PRIMARY KEY ("organizationId")
);

-- CreateTable
CREATE TABLE "CardPayment" (
    "id" TEXT NOT NULL,
    "sellerId" TEXT NOT NULL,
    "accessId" TEXT,
    "cardAccountId" TEXT NOT NULL,
    "chargeId" TEXT,
    "amountMicros" BIGINT NOT NULL,
    "refundedMicros" BIGINT NOT NULL DEFAULT 0,
    "disputeLostMicros" BIGINT NOT NULL DEFAULT 0,
    "disputeStatus" TEXT,
    "status" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CardPayment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ProviderEvent" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ProviderEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "CardPayment_chargeId_key" ON "CardPayment"("chargeId");

-- CreateIndex
CREATE INDEX "CardPayment_accessId_idx" ON "CardPayment"("accessId");

-- CreateIndex
CREATE INDEX "CardPayment_sellerId_idx" ON "CardPayment"("sellerId");

-- CreateIndex
CREATE UNIQUE INDEX "Seller_cardAccountId_key" ON "Seller"("cardAccountId");

-- AddForeignKey
ALTER TABLE "OrganizationPlan" ADD CONSTRAINT "OrganizationPlan_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
