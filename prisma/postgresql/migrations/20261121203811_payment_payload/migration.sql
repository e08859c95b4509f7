-- AlterTable
ALTER TABLE "PaymentAttempt" ADD COLUMN     "paymentPayloadJson" TEXT;
