-- AlterTable
ALTER TABLE "CardPayment" ADD COLUMN     "paymentAttemptId" TEXT,
ADD COLUMN     "refundId" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "CardPayment_paymentAttemptId_key" ON "CardPayment"("paymentAttemptId");
