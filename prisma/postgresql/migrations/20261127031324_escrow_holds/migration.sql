-- AlterTable
ALTER TABLE "PaymentAttempt" ADD COLUMN     "holdTxHash" TEXT,
ADD COLUMN     "refundTxHash" TEXT;
