-- AlterTable
ALTER TABLE "PaymentAttempt" ADD COLUMN "holdTxHash" TEXT;
ALTER TABLE "PaymentAttempt" ADD COLUMN "refundTxHash" TEXT;
