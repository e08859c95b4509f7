-- AlterTable
ALTER TABLE "Access" ADD COLUMN     "appliedPeriodEnd" TIMESTAMP(3),
ADD COLUMN     "unappliedCreditMicros" BIGINT NOT NULL DEFAULT 0;
