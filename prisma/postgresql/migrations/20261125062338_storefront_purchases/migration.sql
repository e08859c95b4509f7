-- AlterTable
ALTER TABLE "Access" ADD COLUMN     "canceledAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "PaymentAttempt" ADD COLUMN     "accessId" TEXT,
ADD COLUMN     "purchaseJson" TEXT;

-- AlterTable
ALTER TABLE "Plan" ADD COLUMN     "trialsOpened" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Seller" ADD COLUMN     "stateful" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "TrialClaim" (
    "planId" TEXT NOT NULL,
    "takerId" TEXT NOT NULL,
    "accessId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TrialClaim_pkey" PRIMARY KEY ("planId","takerId")
);

-- CreateIndex
CREATE INDEX "Access_planId_idx" ON "Access"("planId");
