-- AlterTable
ALTER TABLE "SessionChannel" ADD COLUMN     "totalSettled" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "SessionTransaction" (
    "id" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "openKey" TEXT,
    "transaction" TEXT,
    "itemsJson" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SessionTransaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SessionCharge" (
    "attemptId" TEXT NOT NULL,
    "sellerId" TEXT NOT NULL,
    "channelId" TEXT NOT NULL,
    "chargedMicros" BIGINT NOT NULL,
    "cumulative" BIGINT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SessionCharge_pkey" PRIMARY KEY ("attemptId")
);

-- CreateIndex
CREATE UNIQUE INDEX "SessionTransaction_openKey_key" ON "SessionTransaction"("openKey");

-- CreateIndex
CREATE INDEX "SessionTransaction_network_status_idx" ON "SessionTransaction"("network", "status");

-- CreateIndex
CREATE INDEX "SessionCharge_sellerId_createdAt_idx" ON "SessionCharge"("sellerId", "createdAt");
