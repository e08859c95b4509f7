-- AlterTable
ALTER TABLE "AccountWrite" ADD COLUMN     "claimedBy" TEXT,
ADD COLUMN     "lastHttpStatus" INTEGER,
ADD COLUMN     "lastReply" TEXT;

-- AlterTable
ALTER TABLE "Seller" ADD COLUMN     "accountWriteVariant" TEXT NOT NULL DEFAULT 'original';

-- CreateIndex
CREATE INDEX "AccountWrite_status_claimedUntil_idx" ON "AccountWrite"("status", "claimedUntil");

-- CreateIndex
CREATE INDEX "AccountWrite_claimedBy_idx" ON "AccountWrite"("claimedBy");

-- CreateIndex
CREATE INDEX "PaymentAttempt_accessId_status_idx" ON "PaymentAttempt"("accessId", "status");
