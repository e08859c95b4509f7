-- AlterTable
ALTER TABLE "SessionChannel" ADD COLUMN     "refundNonce" INTEGER NOT NULL DEFAULT 0;
