-- AlterTable
ALTER TABLE "PaymentAttempt" ADD COLUMN "payoutTo" TEXT;
